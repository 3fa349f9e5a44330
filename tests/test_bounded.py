"""ozfft._bounded.put_bounded: the per-signature caches' oldest-first bound."""

from ozfft._bounded import put_bounded


def test_put_bounded_drops_the_oldest_entry():
    kept: dict = {}
    for i in range(5):
        assert put_bounded(kept, ("key", i), i, 3) == i
    assert kept == {("key", 2): 2, ("key", 3): 3, ("key", 4): 4}  # the two oldest went
    assert list(kept) == [("key", 2), ("key", 3), ("key", 4)]
