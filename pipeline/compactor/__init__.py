"""The compaction worker, a Spark job (Hive's Worker with Spark doing the rewrite).

    python -m pipeline compact --address HOST:PORT            # one queue entry, then exit
    python -m pipeline compact --address HOST:PORT --loop     # a long-running worker

`run_one` claims, compacts and completes one entry; `run_loop` repeats it. See `worker` for the steps.
"""

from pipeline.compactor.worker import CompactionRun, run_loop, run_one

__all__ = ["CompactionRun", "run_loop", "run_one"]
