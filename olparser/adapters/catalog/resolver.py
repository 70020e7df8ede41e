"""Resolution: which catalog asset each dataset of a plan is. The I/O half of linking (the pure halves are
`olparser/resolution/candidates.py` before it and `olparser/lineage/link.py` after it).

For the datasets of one plan (or of many plans, in a backfill) the resolver

1. derives each dataset's candidates (memoised: a steady stream of runs names the same datasets);
2. checks every exact candidate the cache knows nothing about with bulk lookups, one
   `GET entity/bulk/uniqueAttribute/type/{type}?attr_N:qualifiedName=...` per type (more only for URL length);
3. walks each dataset's candidates in order and links it to the first that exists and is not an entity the connector
   created itself (the run-state registry of interim datasets says which; one it created but a scan has since
   filled in is the scanner's now, `taken_over`), running a discovery query only when it reaches a search candidate
   before any exact hit;
4. otherwise leaves the dataset on the identity the builder gave it; `interim` lists those that have candidates to
   be re-linked to later.

What one run can cost is bounded: lookups by the number of candidate types (and URL length), discovery queries by
`RESOLUTION_MAX_SEARCHES_PER_RUN` (a run over 500 new folders would otherwise ask 500 times; the rest are asked by
later runs and the re-link timer). A backfill resolves without that bound (it is rate-limited as a whole).

Every answer is cached: existence (positive and negative, shared with the uploader), ownership, searches, each for
a bounded time and in bounded number. So a run over datasets seen recently costs no call here. `fresh=True` (the
re-link timer) ignores negative answers, to see what a scan registered since.

The resource-set rules come from the account (`resourceSetRuleConfigs/defaultResourceSetRuleConfig`), read once on
first use; Purview's documented defaults when the account API refuses (403), does not exist (404) or answers
something unreadable. A transient failure uses the defaults and asks again after `RULES_RETRY_SECONDS`.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from olparser.adapters.catalog.errors import CatalogHttpError, CatalogRejected, CatalogUnavailable
from olparser.adapters.catalog.existence import SAFE_URL_LENGTH, ExistenceCache, TtlMap, guid_batches, taken_over
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.adapters.catalog.rules import read_active, retry_for
from olparser.catalog_rules import REQUEST, related
from olparser.lineage.databricks_model import JOB
from olparser.resolution.candidates import dataset_candidates
from olparser.resolution.model import Candidate, Key, NamedDataset, Resolution, Search, search_hits, search_match
from olparser.resolution.resource_sets import ResourceSetRules
from olparser.resolution.tasks import TaskLookup, TaskMatch, match_task

log = logging.getLogger(__name__)

RULES_RETRY_SECONDS = 300.0
# A job's task, once found (the builder's own, or the accelerator's), stays the task: kept a day, not the existence
# cache's minutes, so an active job costs its lookup about once a day (a write recreates a task deleted meanwhile)
TASK_MATCH_SECONDS = 24 * 3600.0
UNKNOWN_TYPE = "ATLAS-400-00-014"


class ResolverClient(Protocol):
    endpoint_url: str

    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def entities_by_guid(self, guids: list[str]) -> list[dict[str, Any]]: ...
    def search_assets(self, query: dict[str, Any]) -> list[tuple[str, str]]: ...
    def resource_set_rule_config(self) -> dict[str, Any]: ...


Ownership = Callable[[Sequence[Key]], set[Key]]  # which of these keys are interim datasets the connector created


class ResourceSetRuleSource:
    """The account's resource-set rules, read once (see the module docstring)."""

    def __init__(
        self, client: ResolverClient, retry: RetryPolicy, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._client = client
        self._retry = retry
        self._clock = clock
        self._rules: ResourceSetRules | None = None
        self.generation = 0  # bumped whenever the rules in use change
        self._final = False
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def rules(self, calls: list[int]) -> ResourceSetRules:
        with self._lock:
            if self._final or (self._rules is not None and self._clock() < self._retry_at):
                # Why the type error is ignored: final, or retried later: the rules were read before (not None)
                return self._rules  # type: ignore[return-value]
            self.generation += 1
            try:
                body = self._retry.run("resource-set rules", self._client.resource_set_rule_config, calls)
                self._rules, self._final = ResourceSetRules.from_account_config(body), True
                log.info("resource-set rules read from the account")
            except CatalogRejected as exc:
                self._rules, self._final = ResourceSetRules.default(), True
                log.info("resource-set rules: the account API answered %s; using Purview's defaults", exc.status)
            except ValueError as exc:
                self._rules, self._final = ResourceSetRules.default(), True
                log.warning(
                    "resource-set rules: the account's configuration is unreadable (%s); using Purview's defaults",
                    str(exc)[:200],
                )
            except (CatalogUnavailable, CatalogHttpError, OSError) as exc:
                self._rules, self._retry_at = ResourceSetRules.default(), self._clock() + RULES_RETRY_SECONDS
                log.warning(
                    "resource-set rules: the account API is unavailable (%s); using Purview's defaults for now",
                    type(exc).__name__,
                )
            return self._rules


def resolver_for(
    client: ResolverClient, settings: Any, cache: ExistenceCache, *, owned: Ownership | None = None
) -> "ScannedAssetResolver":
    """The resolver as the settings configure it (one rule for the live path and the backfill)."""
    return ScannedAssetResolver(
        client,
        cache=cache,
        retry=retry_for(REQUEST, settings),
        owned=owned,
        max_entries=settings.catalog_cache_entries,
        max_searches=settings.resolution_max_searches_per_run,
    )


class ScannedAssetResolver:
    """Resolves datasets against the catalog, with caches shared by every run of the process (thread-safe)."""

    def __init__(
        self,
        client: ResolverClient,
        *,
        cache: ExistenceCache,
        retry: RetryPolicy,
        owned: Ownership | None = None,
        rules: ResourceSetRuleSource | None = None,
        max_url_length: int = SAFE_URL_LENGTH,
        max_entries: int = 100_000,
        max_searches: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._cache = cache
        self._retry = retry
        self._owned = owned or (lambda keys: set())
        self._rule_source = rules or ResourceSetRuleSource(client, retry, clock=clock)
        self._max_url_length = max_url_length
        self._max_searches = max_searches
        self._ownership: TtlMap[Key, bool] = TtlMap(clock=clock, max_entries=max_entries)
        self._searches: TtlMap[Search, Key | None] = TtlMap(clock=clock, max_entries=max_entries)
        self._candidates: TtlMap[tuple[NamedDataset, int], tuple[Candidate, ...]] = TtlMap(
            clock=clock, max_entries=max_entries
        )
        self._tasks: TtlMap[TaskLookup, TaskMatch | None] = TtlMap(clock=clock, max_entries=max_entries)

    @property
    def cache(self) -> ExistenceCache:
        return self._cache

    def candidates(self, dataset: NamedDataset, calls: list[int] | None = None) -> tuple[Candidate, ...]:
        """The dataset's candidates in order (memoised per rule set, as long as a positive answer)."""
        rules = self._rule_source.rules(calls if calls is not None else [0])
        memo_key = (dataset, self._rule_source.generation)
        found = self._candidates.get_many((memo_key,)).get(memo_key)
        if found is None:
            found = dataset_candidates(dataset, rules)  # kept as long as positive answers: a resource-set regex that
            self._candidates.put_many([(memo_key, found)], self._cache.ttl_seconds)  # timed out is not kept for good
        return found

    def resolve(
        self,
        datasets: Iterable[NamedDataset],
        *,
        fresh: bool = False,
        bounded: bool = True,
        extra: Mapping[Key, tuple[Candidate, ...]] | None = None,
        tasks: Iterable[TaskLookup] = (),
    ) -> Resolution:
        """Link what can be linked (see the module docstring). `bounded`: at most `max_searches` discovery queries
        that are not answered from the cache; the datasets whose search is deferred stay interim for now (the next run
        or the re-link timer asks). `extra`: other scanned assets a plan references, by the key it asks for them
        under (a Data Factory pipeline: `LineagePlan.resolution_extra`); linked the same way, never interim (the
        connector never creates them). `tasks`: job runs' tasks, each answered with the job's existing task it
        stands for (`Resolution.tasks`, see `match_tasks`). Raises CatalogUnavailable / CatalogRejected as the
        uploader does."""
        calls = [0]
        planned = {d.default: self.candidates(d, calls) for d in datasets}
        resolution = self.resolve_candidates(
            {**planned, **(extra or {})},
            fresh=fresh,
            calls=calls,
            max_searches=self._max_searches if bounded else None,
        )
        matches = self.match_tasks(tasks, calls)
        if extra:
            resolution = replace(resolution, interim={k: v for k, v in resolution.interim.items() if k not in extra})
        return replace(resolution, tasks=matches, calls=calls[0])

    def match_tasks(self, lookups: Iterable[TaskLookup], calls: list[int]) -> dict[str, TaskMatch]:
        """The job's existing task each lookup's task stands for (olparser/resolution/tasks.py): one lookup of the
        jobs with their tasks (`job_tasks`), and, only when a job holds tasks that are not the builder's own, one
        read of those tasks' attributes. A task found is kept TASK_MATCH_SECONDS, a job the catalog lacks as long as
        an absent dataset, so a job's runs cost no call once it has been asked."""
        wanted = list(dict.fromkeys(lookups))
        answers: dict[TaskLookup, TaskMatch | None] = dict(self._tasks.get_many(wanted))
        missing = [lookup for lookup in wanted if lookup not in answers]
        if missing:
            try:
                found = read_active(
                    self._client,
                    sorted({(JOB, lookup.job) for lookup in missing}),
                    self._retry,
                    calls,
                    relationships=True,
                    max_url_length=self._max_url_length,
                )
            except CatalogRejected as exc:
                if exc.error_code != UNKNOWN_TYPE:
                    raise
                found = {}  # a catalog without Purview's Databricks model (yet) holds no job
            jobs = {key[1]: entity for key, entity in found.items()}
            headers = {lookup: _task_headers(jobs.get(lookup.job)) for lookup in missing}
            unread = sorted(
                {
                    guid
                    for lookup, listed in headers.items()
                    if not any(_header_name(h) == lookup.task for h in listed)
                    for h in listed
                    if isinstance(guid := h.get("guid"), str)
                }
            )
            tasks = {e.get("guid"): e for e in self._read_guids(unread, calls)}
            for lookup in missing:
                entities = [tasks.get(h.get("guid")) or _header_entity(h) for h in headers[lookup]]
                answers[lookup] = match_task(lookup, jobs.get(lookup.job), entities)
            self._tasks.put_many(
                [(lookup, answers[lookup]) for lookup in missing if answers[lookup] is not None],
                max(self._cache.ttl_seconds, TASK_MATCH_SECONDS),
            )
            self._tasks.put_many(
                [(lookup, None) for lookup in missing if answers[lookup] is None], self._cache.absent_ttl_seconds
            )
        return {lookup.task: match for lookup, match in answers.items() if match is not None}

    def resolve_candidates(
        self,
        planned: dict[Key, tuple[Candidate, ...]],
        *,
        fresh: bool = False,
        calls: list[int] | None = None,
        max_searches: int | None = None,
    ) -> Resolution:
        """`resolve` for datasets whose candidates are known already (the re-link registry keeps them)."""
        calls = calls if calls is not None else [0]
        budget = [max_searches if max_searches is not None else -1]  # -1: no bound
        exact = {c.key for candidates in planned.values() for c in candidates if c.exact}
        # known to exist (fresh: the datasets being re-linked are looked at again, to see whether a scan has filled
        # them in since)
        present = self._cache.known(exact) - (set(planned) if fresh else set())
        absent = set() if fresh else self._cache.absent(exact)
        looked_up = self._lookup(exact - present - absent, calls)
        present |= set(looked_up)
        taken: set[Key] = set()
        ours = self._ours(present, looked_up, taken)
        links: dict[Key, Key] = {}
        interim: dict[Key, tuple[Candidate, ...]] = {}
        for default, candidates in planned.items():
            target = self._first(candidates, present, ours, taken, calls, fresh, budget)
            if target is not None:
                links[default] = target
            elif any(c.key != default for c in candidates):
                interim[default] = candidates
        return Resolution(links=links, interim=interim, taken_over=frozenset(taken), calls=calls[0])

    def note_interim(self, keys: Iterable[Key]) -> None:
        """These entities were just created by the connector (registered as interim)."""
        self._ownership.put_many(((key, True) for key in keys), self._cache.ttl_seconds)

    def forget(self, keys: Iterable[Key]) -> None:
        """Forget what is known of these entities (one vanished, or was re-linked and deleted)."""
        keys = list(keys)
        self._cache.forget(keys)
        self._ownership.forget(keys)

    def forget_datasets(self, datasets: Iterable[NamedDataset]) -> None:
        """Forget every answer about these datasets: their defaults and every candidate, searches included."""
        candidates = [c for d in datasets for c in (*self.candidates(d), Candidate(*d.default, "default"))]
        self.forget(c.key for c in candidates if c.exact)
        self._searches.forget(c.search for c in candidates if c.search is not None)

    def search_hits(self, search: Search, calls: list[int] | None = None) -> list[Key]:
        """Every hit of a search that has its shape, from one discovery query, not cached: why a search candidate
        linked nothing (`qn-tester --explain`: no hit, or several)."""
        calls = calls if calls is not None else [0]
        hits = self._retry.run("discovery query", lambda: self._client.search_assets(search.query()), calls)
        return search_hits(search, hits)

    # --- internals ---------------------------------------------------------------------------------------------
    def _read_guids(self, guids: list[str], calls: list[int]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for chunk in guid_batches(self._client.endpoint_url, guids, self._max_url_length):
            found += self._retry.run(
                "read by guid", functools.partial(self._client.entities_by_guid, list(chunk)), calls
            )
        return found

    def _lookup(self, keys: set[Key], calls: list[int]) -> dict[Key, dict[str, Any]]:
        """The ACTIVE entities among `keys`, by key: one lookup per type (and URL-sized chunk); the answers cached."""
        found = read_active(
            self._client, sorted(keys), self._retry, calls, what="existence check", max_url_length=self._max_url_length
        )
        self._cache.remember(found)
        self._cache.remember_absent(keys - set(found))
        return found

    def _ours(self, present: set[Key], entities: dict[Key, dict[str, Any]], taken: set[Key]) -> set[Key]:
        """Which of `present` the connector created (and no scan has taken over since: checked on every entity just
        looked up); fills `taken`."""
        known = self._ownership.get_many(present)
        unknown = sorted(present - set(known))
        registered = self._owned(unknown) if unknown else set()
        answers = {key: key in registered for key in unknown}
        for key, entity in entities.items():
            if answers.get(key, known.get(key)) and taken_over(entity):
                taken.add(key)
                answers[key] = False
        if answers:
            self._ownership.put_many(answers.items(), self._cache.ttl_seconds)
            known.update(answers)
        return {key for key, mine in known.items() if mine}

    def _first(
        self,
        candidates: tuple[Candidate, ...],
        present: set[Key],
        ours: set[Key],
        taken: set[Key],
        calls: list[int],
        fresh: bool,
        budget: list[int],
    ) -> Key | None:
        for candidate in candidates:
            if candidate.exact:
                if candidate.key in present and candidate.key not in ours:
                    return candidate.key
                continue
            # Why the type error is ignored: a candidate that is not exact has a search
            hit = self._search(candidate.search, calls, fresh, budget)  # type: ignore[arg-type]
            if hit is not None and hit not in self._ours({hit}, {}, taken):
                return hit
        return None

    def _search(self, search: Search, calls: list[int], fresh: bool, budget: list[int]) -> Key | None:
        answers = self._searches.get_many((search,))
        if search in answers and (answers[search] is not None or not fresh):
            return answers[search]
        if budget[0] == 0:
            return None  # deferred: not asked, nothing cached
        budget[0] -= 1
        hits = self._retry.run("discovery query", lambda: self._client.search_assets(search.query()), calls)
        match = search_match(search, hits)
        if match is None and len(search_hits(search, hits)) > 1:
            log.warning(
                "a search for %s %r found several assets of that shape: nothing linked (ambiguous)",
                search.type_name or "assetType " + " or ".join(search.asset_types),
                search.keywords,
            )
        if match is not None:
            self._searches.put_many([(search, match)], self._cache.ttl_seconds)
            self._cache.remember([match])
        else:
            self._searches.put_many([(search, None)], self._cache.absent_ttl_seconds)
        return match


def _task_headers(job: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The job's active tasks, as the related object ids of its `job_tasks` (Purview's databricks_job_job_tasks)."""
    return related(job or {}, ("job_tasks",))


def _header_name(header: dict[str, Any]) -> str | None:
    name = (header.get("uniqueAttributes") or {}).get("qualifiedName")
    return name if isinstance(name, str) else None


def _header_entity(header: dict[str, Any]) -> dict[str, Any]:
    """A task as its related object id shows it (type, qualifiedName, display name): the builder's own task needs
    no more."""
    return {
        "typeName": header.get("typeName"),
        "attributes": {"qualifiedName": _header_name(header), "name": header.get("displayText")},
    }
