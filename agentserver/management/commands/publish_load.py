"""Publish synthetic events for a user at a steady rate, through the real publish() path (outbox, event log,
Redis). Run beside a server on the same database (and REDIS_URL, for live delivery across processes):
bench/events.py drives it; tests use it to fill the log for Last-Event-ID replay."""
import os
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agentserver.events import publisher as events


class Command(BaseCommand):
    help = "Publish COUNT (or RATE × SECONDS) synthetic events {seq, t} for USER, then wait until they are out."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True)
        parser.add_argument("--rate", type=float, default=100.0, help="events per second")
        parser.add_argument("--seconds", type=float, default=None)
        parser.add_argument("--count", type=int, default=None)
        parser.add_argument("--directory", default=None, help="default: the user's first root")
        parser.add_argument("--type", default="bench.tick")
        parser.add_argument("--delta", action="store_true", help="publish message.part.delta (not logged)")

    def handle(self, *args, user, rate, seconds, count, directory, type, delta, **options):
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise CommandError(f"No such user: {user}")
        if rate <= 0:
            raise CommandError("--rate must be positive")
        if count is None:
            count = int(rate * (seconds if seconds is not None else 5.0))
        if directory is None:
            roots = list(owner.roots.values_list("path", flat=True))
            directory = roots[0] if roots else None
        directory = os.path.realpath(directory) if directory else None
        event_type = events.DELTA if delta else type

        events.warm_up()
        start = time.monotonic()
        for seq in range(count):
            ahead = start + seq / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            properties = {"seq": seq, "t": time.time()}
            if delta:
                properties.update(sessionID="ses_bench", messageID="msg_bench", partID="prt_bench",
                                  field="text", delta=".")
            events.publish(event_type, properties, owner_id=owner.pk, directory=directory)
        elapsed = time.monotonic() - start
        if not events.flush(30):
            raise CommandError("events were still pending after 30 s")
        self.stdout.write(f"published {count} events in {elapsed:.2f}s ({count / max(elapsed, 1e-9):.0f}/s)")
