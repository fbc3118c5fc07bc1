"""`parse` answers an empty object without running the serializer when that cannot change the answer; for
every input serializer of the project, what it answers is what DRF's validation answers (data or 400)."""
import importlib
import pkgutil

import pytest
from rest_framework import serializers

from agentserver.errors import BadRequest
from agentserver.http.api import parse

APPS = ["agentserver", "auth_app", "projects_app", "sessions_app", "providers_app", "pty_app"]


def input_serializers() -> list[type]:
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, app + "."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)

    def below(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return sorted({cls for cls in below(serializers.Serializer)
                   if cls.__module__.split(".")[0] in APPS and not issubclass(cls, serializers.ModelSerializer)},
                  key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def test_there_are_input_serializers_to_check():
    assert len(input_serializers()) > 30


@pytest.mark.parametrize("serializer_class", input_serializers(), ids=lambda cls: cls.__qualname__)
@pytest.mark.parametrize("partial", [False, True])
def test_an_empty_body_parses_as_drf_validates_it(serializer_class, partial):
    reference = serializer_class(data={}, partial=partial)
    if reference.is_valid():
        assert parse(serializer_class, {}, partial=partial) == dict(reference.validated_data)
    else:
        with pytest.raises(BadRequest):
            parse(serializer_class, {}, partial=partial)
