"""The one wall clock of the server: milliseconds since the epoch, as opencode stores every time."""
import time


def now_ms() -> int:
    return int(time.time() * 1000)
