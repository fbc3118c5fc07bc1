"""A model the catalog has no price for is recorded at zero cost, marked unpriced."""
from projects_app.models import UserConfig
from tests.fakes.fixtures import Reply
from tests.runner.conftest import text_prompt
from tests.usage.conftest import records


def drop_prices(persona):
    config = UserConfig.objects.get(user=persona.user)
    data = dict(config.data)
    provider = dict(data["provider"]["fake"])
    model = dict(provider["models"]["fake-model"])
    model.pop("cost")
    provider["models"] = {"fake-model": model}
    data["provider"] = {**data["provider"], "fake": provider}
    config.data = data
    config.save(update_fields=["data"])


def test_a_model_without_prices_is_recorded_unpriced_at_zero_cost(alice, llm, session_of):
    drop_prices(alice)
    session = session_of(title="no title call")
    llm.script(Reply(text="free of charge"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    [record] = records()
    assert not record.priced and record.cost == 0.0 == answer["info"]["cost"]
    assert (record.input_tokens, record.output_tokens) == (100, 20) and record.usage_reported
