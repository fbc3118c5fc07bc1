import pytest

from tests.fakes.fixtures import configure_fake_provider


@pytest.fixture
def llm(alice, fake_llm):
    configure_fake_provider(alice, fake_llm)
    yield fake_llm
    # The language servers this test started end with it (each is a Node process of a few hundred MB).
    alice.post("/instance/dispose", params={"directory": str(alice.repo)})
