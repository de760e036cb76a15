"""The fault-injection suite (issue 15): three caching gateways and a cache-off oracle on one
PostgreSQL, concurrent writers and readers through all of them, and one fault at a time:

* PostgreSQL restarted with `pg_ctl stop -m fast`, then with `-m immediate` (a crash), back after a pause;
* kill -9 of a gateway while a client holds txns and locks through it (then a new process replaces it);
* SIGSTOP of a gateway (20 s in the long run), then SIGCONT; meanwhile a side writer that never calls
  it shows the others keep committing;
* a client that vanishes (txns and locks held, writes in flight, its channel closed without commit,
  abort or unlock).

After each fault: every acknowledged commit is present and no aborted write is visible (the writers'
ledger against PostgreSQL, read through the oracle with a fresh snapshot); every live gateway, caught
up, answers the same reads as the oracle, and reads a cache answered while the database was away equal
the database's once it is back; the vanished client's or dead gateway's txns and locks are reaped within
hive.txn.timeout plus the reaper's interval; a commit made after the database's return (or the SIGCONT,
or the kill) is applied by every live gateway within 2 s (`recovery_s`); every error a client saw is
UNAVAILABLE, or ABORTED for a txn the reaper aborted, or (only for a call to the stopped gateway while
it was stopped) the client's own DEADLINE_EXCEEDED; anything else (INTERNAL, UNKNOWN ...) fails. Calls made
while PostgreSQL is down wait for it and are answered once it is back (`calls_waited_out_the_database`);
the only ones it fails are writes whose commit was in flight when it stopped (UNAVAILABLE, "maybe_committed").

    python -m loadtest.faults                      # each fault 3 times, SIGSTOP 20 s (`make faults`)
    python -m loadtest.faults --rounds 1 --faults sigstop_gateway --sigstop 5

The short version (each fault once, SIGSTOP 5 s) runs in `make test`: tests/e2e/test_faults.py.

The report gives, per fault: calls made, errors by status (with their allowed kind, one example each,
and by gateway), the acknowledged commits checked (cumulative), reads compared with the oracle, and the
figures: recovery_s (fault's end to a new commit applied everywhere) split into probe_commit_s and
probe_apply_s, reap_s, slowest_call_s. The gateways keep Hive's 60 s poller timer, so only LISTEN/NOTIFY
can meet the 2 s bound; hive.txn.timeout is 4 s and the reaper runs every second, so reaping takes seconds.

The parts: ledger.py (what clients did and saw; which errors are allowed), cluster.py (PostgreSQL and the
gateway processes, and the faults' mechanics), workload.py (writers and readers), holder.py (the client
holding txns and locks; the recovery probe), suite.py (phases, checks, report, command line).
"""

from loadtest.faults.suite import FAULTS, FaultConfig, SuiteReport, main, run_faults

__all__ = ["FAULTS", "FaultConfig", "SuiteReport", "main", "run_faults"]
