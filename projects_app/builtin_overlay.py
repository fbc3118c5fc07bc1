"""opencode's rule for the built-in lists a config can change (`lsp`, `formatter`): `false` turns them all off;
in a map, an entry with `disabled: true` removes one, any other entry adds one or replaces it."""
from collections.abc import Callable
from typing import TypeVar

Item = TypeVar("Item")


def overlay(setting, built_in: dict[str, Item],
            configure: Callable[[str, dict, Item | None], Item | None]) -> dict[str, Item]:
    if setting is False:
        return {}
    items = dict(built_in)
    if isinstance(setting, dict):
        for name, entry in setting.items():
            if not isinstance(entry, dict):
                continue
            if entry.get("disabled") is True:
                items.pop(name, None)
                continue
            item = configure(name, entry, items.get(name))
            if item is not None:
                items[name] = item
    return items
