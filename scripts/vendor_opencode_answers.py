"""Writes agentserver/http/opencode_answers.json: what opencode's server says each of its routes answers on success,
taken from its own OpenAPI document (opencode 1.18.33's /doc), for /doc to state (agentserver/http/schema.py).

    python scripts/vendor_opencode_answers.py PATH/TO/openapi-1.18.33.json

agentserver is wire-compatible with opencode, so the bodies its clients read are opencode's: the document
states them in opencode's own words, and the contract test (tests/contract) checks every answer against them.
Kept: each operation's 2xx JSON schemas, keyed by "METHOD path" (path parameters written `{}`, since the two
documents name some of them differently), and the components they reach, transitively."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "agentserver" / "opencode_answers.json"
REF = re.compile(r'"\$ref": "#/components/schemas/([^"]+)"')


def route_key(method: str, path: str) -> str:
    return f"{method.upper()} {re.sub(r'{[^}]+}', '{}', path)}"


def main(source: str) -> None:
    document = json.loads(Path(source).read_text())
    components = document["components"]["schemas"]
    answers: dict[str, dict[str, dict]] = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if not isinstance(operation, dict):
                continue
            for status, response in operation.get("responses", {}).items():
                schema = response.get("content", {}).get("application/json", {}).get("schema")
                if status.startswith("2") and schema is not None:
                    answers.setdefault(route_key(method, path), {})[status] = schema
    reached, pending = set(), REF.findall(json.dumps(answers))
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending.extend(REF.findall(json.dumps(components[name])))
    OUT.write_text(json.dumps({
        "source": Path(source).name,
        "answers": dict(sorted(answers.items())),
        "schemas": {name: components[name] for name in sorted(reached)},
    }, indent=1, sort_keys=False) + "\n")
    print(f"{len(answers)} routes, {len(reached)} components → {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
