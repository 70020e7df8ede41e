"""The existence cache: positive answers, for a limited time, bounded in size."""
from __future__ import annotations

from olparser.catalog.existence import ExistenceCache

A, B, C = ("hive_table", "a@c"), ("hive_table", "b@c"), ("azure_datalake_gen2_path", "a@c")


def test_known_until_the_lifetime_ends(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock)
    cache.remember([A])
    fake_time.now += 59.9
    assert cache.known([A, B]) == {A}
    fake_time.now += 0.1
    assert cache.known([A]) == set()
    assert len(cache) == 0


def test_same_name_under_another_type_is_another_dataset(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock)
    cache.remember([A])
    assert cache.known([C]) == set()


def test_remembering_again_extends_the_lifetime(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock)
    cache.remember([A])
    fake_time.now += 50
    cache.remember([A])
    fake_time.now += 50
    assert cache.known([A]) == {A}


def test_oldest_entries_go_first_when_full(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock, max_entries=2)
    cache.remember([A, B])
    cache.remember([A])  # A is now the newest
    cache.remember([C])
    assert cache.known([A, B, C]) == {A, C}


def test_zero_lifetime_disables_the_cache(fake_time):
    cache = ExistenceCache(0, clock=fake_time.clock)
    cache.remember([A])
    assert cache.known([A]) == set()
