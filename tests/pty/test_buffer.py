"""The scrollback's UTF-8 handling (pure functions; no server)."""
from pty_app.buffer import RingBuffer, complete_prefix_length, skip_continuation

E_ACUTE = "é".encode()  # 2 bytes
EURO = "€".encode()  # 3 bytes
SMILE = "😀".encode()  # 4 bytes


def test_a_chunk_ending_inside_a_character_is_cut_before_it():
    for char in (E_ACUTE, EURO, SMILE):
        for keep in range(1, len(char)):
            data = b"ab" + char[:keep]
            assert complete_prefix_length(data) == 2
        assert complete_prefix_length(b"ab" + char) == 2 + len(char)
    assert complete_prefix_length(b"") == 0
    assert complete_prefix_length(b"plain") == 5


def test_slices_never_start_mid_character():
    data = SMILE + b"x"
    assert skip_continuation(data, 1) == 4
    assert skip_continuation(data, 0) == 0


def test_the_ring_keeps_the_tail_and_counts_everything():
    ring = RingBuffer(4096)
    text = ("é" * 3000).encode()  # 6000 bytes: the head gets trimmed
    for start in range(0, len(text), 1000):
        ring.append(text[start:start + 1000])
    assert ring.total == 6000
    assert len(ring.data) <= 4096
    assert ring.since(0).decode() == "é" * (len(ring.since(0)) // 2)  # trimmed on a boundary
    assert ring.since(5999) == b""  # mid-character: skipped to the next boundary
    assert ring.since(5998) == "é".encode()
    assert ring.since(-1) == b"" and ring.since(6000) == b""
