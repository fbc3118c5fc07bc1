import pytest

from tests.tools.harness import make_workspace


@pytest.fixture
def ws(transactional_db, tmp_path):
    return make_workspace("walter", tmp_path)
