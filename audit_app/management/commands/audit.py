"""`manage.py audit verify | export --since WHEN | retention --older-than DAYS`."""
import datetime
import sys

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_date, parse_datetime

from audit_app.log import as_line
from audit_app.models import AuditRecord
from audit_app.retention import retention_apply
from audit_app.verify import verify


def _moment(value: str) -> datetime.datetime:
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.datetime.combine(day, datetime.time())
    if moment is None:
        raise ValueError(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def _days(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 36500:
        raise ValueError(value)
    return int(value)


class Command(BaseCommand):
    help = "The audit log: verify its hash chain, export it as JSON lines, or remove old records."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="command", required=True)
        commands.add_parser("verify", help="walk the chain; name the first record changed, removed or moved")
        export = commands.add_parser("export", help="write the records as JSON lines, oldest first")
        export.add_argument("--since", type=_moment, required=True, help="ISO date or date-time (UTC if no zone)")
        export.add_argument("--until", type=_moment, default=None)
        export.add_argument("--output", default="-", help="a file (default: standard output)")
        retention = commands.add_parser("retention", help="remove records older than DAYS (leaves a record)")
        retention.add_argument("--older-than", type=_days, required=True, metavar="DAYS")

    def handle(self, *args, command, **options):
        if command == "verify":
            verdict = verify()
            if not verdict.ok:
                raise CommandError(str(verdict))
            self.stdout.write(str(verdict))
        elif command == "export":
            self._export(options["since"], options["until"], options["output"])
        else:
            removed = retention_apply(older_than=datetime.timedelta(days=options["older_than"]))
            self.stdout.write(f"Removed {removed} audit record(s) older than {options['older_than']} days.")

    def _export(self, since, until, output: str) -> None:
        rows = AuditRecord.objects.filter(time__gte=since)
        if until is not None:
            rows = rows.filter(time__lt=until)
        out = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
        try:
            count = 0
            for row in rows.order_by("id").iterator(chunk_size=2000):
                out.write(as_line(row) + "\n")
                count += 1
        finally:
            if out is not sys.stdout:
                out.close()
        if output != "-":
            self.stdout.write(f"Wrote {count} audit record(s) to {output}.")
