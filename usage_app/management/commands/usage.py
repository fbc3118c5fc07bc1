"""`manage.py usage report ...` prints usage from the shell (everyone's); `manage.py usage rollup` removes old
records, whose calls stay in the day sums (docs/usage.md)."""
import json

from django.core.management.base import BaseCommand, CommandError

from agentserver.errors import ApiError
from usage_app import export, selectors, services
from usage_app.periods import parse_instant


def _instant(value: str):
    try:
        return parse_instant(value)
    except ValueError:
        raise CommandError(f"Expected an ISO date, an ISO date-time or milliseconds, got {value!r}") from None


class Command(BaseCommand):
    help = "Usage of the model calls: reports, and removing old records (their calls stay in the day sums)."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        report = actions.add_parser("report", help="usage summed over a period")
        report.add_argument("--since", help="ISO date, ISO date-time or milliseconds")
        report.add_argument("--until", help="ISO date, ISO date-time or milliseconds (excluded)")
        report.add_argument("--group-by", choices=selectors.GROUPINGS)
        for name in ("person", "group", "provider", "model", "session"):
            report.add_argument(f"--{name}")
        report.add_argument("--format", choices=["table", "csv", "jsonl", "json"], default="table")
        rollup = actions.add_parser("rollup", help="remove the records older than N days (their calls stay in "
                                                   "the day sums per session and per person and model)")
        rollup.add_argument("--older-than", type=int, default=90, metavar="DAYS",
                            help="the records of the days that ended at least DAYS days ago (default 90)")

    def handle(self, *args, action: str, **options):
        if action == "rollup":
            try:
                removed = services.do_rollup(older_than_days=options["older_than"])
            except ValueError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(f"removed {removed} records (their calls stay in the day sums)")
            return
        wanted = selectors.UsageFilter(
            since=_instant(options["since"]) if options["since"] else None,
            until=_instant(options["until"]) if options["until"] else None,
            person=options["person"], group=options["group"], provider_id=options["provider"],
            model_id=options["model"], session_id=options["session"])
        try:
            rows = selectors.usage_summary(viewer=selectors.EVERYONE, wanted=wanted, group_by=options["group_by"])
        except ApiError as error:
            raise CommandError(error.message) from None
        output = options["format"]
        if output == "csv":
            self.stdout.write(export.as_csv(rows, options["group_by"]), ending="")
        elif output == "jsonl":
            self.stdout.write(export.as_json_lines(rows), ending="")
        elif output == "json":
            self.stdout.write(json.dumps(rows, indent=2))
        else:
            self.stdout.write(_table([export.flat(row) for row in rows]))


def _table(rows: list[dict]) -> str:
    if not rows:
        return "(no usage)"
    columns = list(rows[0])
    cells = [[f"{row[c]:.6f}" if c == "cost" else str(row[c]) for c in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)
