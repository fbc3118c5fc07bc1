"""Scrollback for replay: the last N bytes of a terminal's output plus the running total, so `?cursor=N`
can replay from byte offset N. Cuts land on UTF-8 character boundaries so every replayed or live chunk
decodes on its own."""


def complete_prefix_length(data: bytes) -> int:
    """Length of the longest prefix that does not end inside a UTF-8 sequence."""
    n = len(data)
    # Walk back over at most 3 continuation bytes to the lead byte of the last character.
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if byte < 0x80:
            return n
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return n if back >= need else n - back
    return n


def skip_continuation(data: bytes | bytearray | memoryview, start: int) -> int:
    """Move `start` past UTF-8 continuation bytes so a slice never begins mid-character."""
    end = min(len(data), start + 3)
    while start < end and 0x80 <= data[start] < 0xC0:
        start += 1
    return start


class RingBuffer:
    def __init__(self, limit: int):
        self.limit = max(limit, 4096)
        self.data = bytearray()
        self.total = 0  # bytes ever written: the cursor a client gets after replay

    @property
    def start(self) -> int:
        return self.total - len(self.data)

    def append(self, chunk: bytes) -> int:
        """Store a chunk; returns its starting offset."""
        offset = self.total
        self.data += chunk
        self.total += len(chunk)
        overflow = len(self.data) - self.limit
        if overflow > 0:
            # Trim in bigger steps than needed so appends stay amortised O(1).
            cut = skip_continuation(self.data, overflow + self.limit // 8)
            del self.data[:cut]
        return offset

    def since(self, cursor: int) -> bytes:
        """Everything from byte offset `cursor` (0 = all kept, -1 = nothing)."""
        if cursor < 0 or cursor >= self.total:
            return b""
        index = max(cursor - self.start, 0)
        return bytes(self.data[skip_continuation(self.data, index):])
