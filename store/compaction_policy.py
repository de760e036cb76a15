"""The Initiator's decision, pure: which compaction a partition needs, from its file facts.

Hive's `Initiator.determineCompactionType` and `checkForCompaction` (hive-reference §7.2 step 4):

1. more aborted write ids with files in the partition than `hive.compactor.abortedtxn.threshold`
   -> MAJOR (H3: an abort-heavy partition is rewritten whole);
2. with a base: delta bytes / base bytes above `hive.compactor.delta.pct.threshold` -> MAJOR;
3. more deltas than `hive.compactor.delta.num.threshold` -> MINOR, or MAJOR when there is no base
   (Hive's "no base" rule: a minor compaction would leave every delta's rows outside a base);
4. the oldest aborted write id with files ended longer ago than
   `hive.compactor.aborted.txn.time.threshold` -> MINOR (its files are removed by the Cleaner);
5. otherwise nothing.

Per-table overrides, as Hive reads them: `compactorthreshold.hive.compactor.delta.num.threshold`
and `compactorthreshold.hive.compactor.delta.pct.threshold` (and the same prefix on the two aborted
thresholds), and `NO_AUTO_COMPACTION` (key in any case) = true turns the Initiator off for the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from hive import durations
from store.errors import InvalidArgument

MAJOR, MINOR = "a", "i"
THRESHOLD_PREFIX = "compactorthreshold."


@dataclass(frozen=True, slots=True)
class Thresholds:
    delta_num: int = 10                 # hive.compactor.delta.num.threshold
    delta_pct: float = 0.1              # hive.compactor.delta.pct.threshold
    aborted_num: int = 1000             # hive.compactor.abortedtxn.threshold
    aborted_age_s: float = 12 * 3600.0  # hive.compactor.aborted.txn.time.threshold

    def __post_init__(self) -> None:
        problems = [f"{key}: {value} ({rule})" for key, value, rule, ok in (
            ("hive.compactor.delta.num.threshold", self.delta_num, "at least 1", self.delta_num >= 1),
            ("hive.compactor.delta.pct.threshold", self.delta_pct, "above 0", self.delta_pct > 0),
            ("hive.compactor.abortedtxn.threshold", self.aborted_num, "not negative", self.aborted_num >= 0),
            ("hive.compactor.aborted.txn.time.threshold", self.aborted_age_s, "a positive duration",
             self.aborted_age_s > 0)) if not ok]
        if problems:
            raise InvalidArgument("compactor thresholds out of range: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class PartitionFacts:
    """What the Initiator learned from one partition's directory under the compactor's view."""

    base_write_id: int = 0              # 0: no base
    base_bytes: int = 0
    delta_count: int = 0                # deltas the compactor would read above the base
    delta_bytes: int = 0
    aborted_ended_s: tuple[float, ...] = field(default_factory=tuple)  # per aborted write id with files


@dataclass(frozen=True, slots=True)
class Decision:
    type: str | None                    # MAJOR, MINOR or None
    reason: str


def auto_compaction_disabled(table_parameters: Mapping[str, str]) -> bool:
    return any(k.lower() == "no_auto_compaction" and v.strip().lower() == "true" for k, v in table_parameters.items())


def _hours_when_bare(text: str) -> float:
    """Seconds in a compactorthreshold.hive.compactor.aborted.txn.time.threshold: Hive reads a bare
    number in hours there, as in the setting (HiveConf's TimeValidator(HOURS))."""
    return durations.parse_duration(text, "h")


def thresholds_for(defaults: Thresholds, table_parameters: Mapping[str, str]) -> Thresholds:
    """`defaults` with the table's `compactorthreshold.*` overrides; a malformed one is refused
    with its key (a table property a person typed)."""
    lowered = {k.lower(): v for k, v in table_parameters.items()}

    def get(key: str, kind: str) -> str | None:
        raw = lowered.get(THRESHOLD_PREFIX + key)
        if raw is not None:
            try:
                parsers: dict[str, Callable[[str], float]] = {"int": int, "float": float,
                                                              "duration": _hours_when_bare}
                parsers[kind](raw.strip())
            except (ValueError, durations.DurationError):
                raise InvalidArgument(f"table property {THRESHOLD_PREFIX}{key}={raw!r} is not a valid {kind}") from None
        return raw

    num = get("hive.compactor.delta.num.threshold", "int")
    pct = get("hive.compactor.delta.pct.threshold", "float")
    aborted = get("hive.compactor.abortedtxn.threshold", "int")
    age = get("hive.compactor.aborted.txn.time.threshold", "duration")
    return replace(defaults,
                   delta_num=int(num) if num is not None else defaults.delta_num,
                   delta_pct=float(pct) if pct is not None else defaults.delta_pct,
                   aborted_num=int(aborted) if aborted is not None else defaults.aborted_num,
                   aborted_age_s=_hours_when_bare(age) if age is not None else defaults.aborted_age_s)


def decide(facts: PartitionFacts, t: Thresholds, now_s: float) -> Decision:
    aborted = len(facts.aborted_ended_s)
    if aborted > t.aborted_num:
        return Decision(MAJOR, f"{aborted} aborted write ids have files (> hive.compactor.abortedtxn.threshold "
                               f"{t.aborted_num})")
    no_base = facts.base_bytes == 0 and facts.base_write_id == 0
    if not no_base and facts.delta_count and facts.base_bytes > 0:
        ratio = facts.delta_bytes / facts.base_bytes
        if ratio > t.delta_pct:
            return Decision(MAJOR, f"delta bytes / base bytes {facts.delta_bytes}/{facts.base_bytes} = {ratio:.3f} "
                                   f"> hive.compactor.delta.pct.threshold {t.delta_pct:g}")
    if facts.delta_count > t.delta_num:
        return Decision(MAJOR if no_base else MINOR,
                        f"{facts.delta_count} deltas > hive.compactor.delta.num.threshold {t.delta_num}"
                        + (" and no base" if no_base else ""))
    if aborted and now_s - min(facts.aborted_ended_s) > t.aborted_age_s:
        return Decision(MINOR, f"an aborted write id ended {now_s - min(facts.aborted_ended_s):.0f}s ago "
                               f"(> hive.compactor.aborted.txn.time.threshold {t.aborted_age_s:g}s)")
    return Decision(None, "below every threshold")
