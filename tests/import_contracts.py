"""Import-linter contracts the built-in ones cannot express, registered in .importlinter:
- no import cycle anywhere in the project, between any modules of any apps (`acyclic_siblings` looks only
  among the children of one package, so agentserver.context ↔ pty_app.services would pass it). Importing
  `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first, so it counts as importing those packages too: a
  package whose `__init__` imports modules that import from the package is a cycle;
- every app's routes sit on top of it: only its URL conf, its other route modules and the project package
  import a module of its `api` package (no service imports a view, no app another app's views)."""
from __future__ import annotations

import grimp
from importlinter.application import contract_utils, output
from importlinter.application.contract_utils import AlertLevel
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def packages_above(graph: grimp.ImportGraph, module: str) -> list[str]:
    """The packages whose `__init__` Python runs before `module`'s (those in the graph)."""
    parts = module.split(".")
    return [p for p in (".".join(parts[:n]) for n in range(1, len(parts))) if p in graph.modules]


def imported_by(graph: grimp.ImportGraph, module: str) -> set[str]:
    """What `module` imports, with the packages each import runs on the way (not `module` itself)."""
    direct = graph.find_modules_directly_imported_by(module)
    return (direct | {p for imported in direct for p in packages_above(graph, imported)}) - {module}


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    for root in sorted(graph.modules):
        if root in index:
            continue
        # Tarjan's algorithm without recursion: the graph is deep enough to exhaust Python's stack.
        work = [(root, iter(sorted(imported_by(graph, root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imported_by(graph, child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


def import_lines(graph: grimp.ImportGraph, importer: str, imported: str) -> list[str]:
    """Where `importer` imports `imported`: its own lines, or those importing a module inside the package."""
    lines = [str(d["line_number"]) for d in graph.get_import_details(importer=importer, imported=imported)]
    if not lines:
        lines = [f"{d['line_number']} ({d['imported']})"
                 for inner in sorted(graph.find_modules_directly_imported_by(importer))
                 if inner.startswith(imported + ".")
                 for d in graph.get_import_details(importer=importer, imported=inner)]
    return sorted(lines)


class AcyclicModulesContract(Contract):
    """No module reaches itself through imports (those inside functions included)."""

    type_name = "acyclic_modules"

    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)
    unmatched_ignore_imports_alerting = fields.EnumField(AlertLevel, default=AlertLevel.ERROR)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph, ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=self.unmatched_ignore_imports_alerting,  # type: ignore[arg-type]
        )
        cycles = []
        for component in import_cycles(graph):
            members = set(component)
            edges = []
            for importer in component:
                for imported in sorted(imported_by(graph, importer) & members):
                    edges.append((importer, imported, import_lines(graph, importer, imported)))
            cycles.append(edges)
        return ContractCheck(kept=not cycles, warnings=list(removal.warnings),
                             ignored_import_count=removal.ignored_import_count, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for edges in check.metadata["cycles"]:
            modules = sorted({importer for importer, _, _ in edges})
            output.print_error(f"These {len(modules)} modules import each other in a cycle:")
            output.new_line()
            for importer, imported, lines in edges:
                output.print_error(f"- {importer} -> {imported} (l.{', l.'.join(lines)})",
                                   bold=False)
            output.new_line()


class RoutesOnTopContract(Contract):
    """In each of `apps`, the route modules (`<app>.api.*`, `<app>.urls`, `<app>.routing`) are imported only
    by that app's route modules and by the packages of `top` (the project package)."""

    type_name = "routes_on_top"

    apps = fields.ListField(subfield=fields.StringField())
    top = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        top = list(self.top or [])  # type: ignore[arg-type]
        broken = []
        for app in self.apps:  # type: ignore[attr-defined]
            routes = {module for module in graph.modules
                      if module in (f"{app}.api", f"{app}.urls", f"{app}.routing") or module.startswith(f"{app}.api.")}
            for imported in sorted(routes):
                for importer in sorted(graph.find_modules_that_directly_import(imported)):
                    if importer in routes or any(importer == t or importer.startswith(t + ".") for t in top):
                        continue
                    lines = sorted(d["line_number"] for d in graph.get_import_details(importer=importer,
                                                                                      imported=imported))
                    broken.append((importer, imported, lines))
        return ContractCheck(kept=not broken, metadata={"imports": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported, lines in check.metadata["imports"]:
            output.print_error(f"{importer} is not allowed to import the route module {imported} "
                               f"(l.{', l.'.join(map(str, lines))})")
            output.new_line()
