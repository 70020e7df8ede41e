"""The existence cache: positive answers, for a limited time, bounded in size."""

from __future__ import annotations

from olparser.adapters.catalog.existence import ExistenceCache

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


def test_negative_answers_last_their_own_time_and_a_positive_one_replaces_them(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock, absent_ttl_seconds=10)
    cache.remember_absent([A, B])
    assert (cache.absent([A, B, C]), cache.known([A, B])) == ({A, B}, set())
    cache.remember([B])  # created since
    assert (cache.absent([A, B]), cache.known([A, B])) == ({A}, {B})
    fake_time.now += 10
    assert (cache.absent([A]), cache.known([B])) == (set(), {B})


def test_without_negative_answers_a_miss_forgets_what_was_known(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock)
    cache.remember([A])
    cache.remember_absent([A])  # looked up again and gone
    assert (cache.known([A]), cache.absent([A]), len(cache)) == (set(), set(), 0)


def test_negative_answers_count_towards_the_size_bound(fake_time):
    cache = ExistenceCache(60, clock=fake_time.clock, absent_ttl_seconds=60, max_entries=2)
    cache.remember([A])
    cache.remember_absent([B, C])
    assert (len(cache), cache.known([A]), cache.absent([B, C])) == (2, set(), {B, C})
