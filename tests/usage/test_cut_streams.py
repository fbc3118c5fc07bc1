"""A stream cut half-way is counted with the tokens received before the cut: Anthropic reports the input
tokens when the message starts, so the failed attempt's record has them; the retry is a call of its own."""
from tests.fakes.fixtures import Reply, configure_fake_provider
from tests.runner.conftest import text_prompt
from tests.usage.conftest import records


def test_a_cut_stream_counts_the_input_tokens_it_received(alice, fake_llm, session_of):
    configure_fake_provider(alice, fake_llm, protocol="anthropic")
    session = session_of(title="no title call")
    fake_llm.script(Reply(text="one two three four five six", break_after=2), Reply(text="made it"))
    answer = alice.post(f"/session/{session['id']}/message", json=text_prompt("hello")).json()
    assert not answer["info"].get("error")
    cut, retried = records()
    assert (cut.outcome, cut.input_tokens, cut.output_tokens, cut.usage_reported) == ("error", 100, 1, True)
    assert cut.cost == (100 * 1.0 + 1 * 2.0) / 1_000_000
    assert (retried.outcome, retried.input_tokens, retried.output_tokens) == ("completed", 100, 20)
    assert retried.cost == answer["info"]["cost"]
    assert cut.message_id == retried.message_id == answer["info"]["id"] and cut.call_id != retried.call_id
