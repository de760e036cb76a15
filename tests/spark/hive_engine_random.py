"""Random HiveQL scripts for Hive 2.3's own engine (its Driver, DbTxnManager on), from a seed: the DDL, SHOW and
DESCRIBE statements, locks, txns and compactions a Hive CLI user runs, and SELECTs the fetch task serves (no
MapReduce job: Hive's engine here has none).

`script(seed, steps)` draws `steps` or a few more statements over a small pool of names (hive_sql_random.py's
databases, tables, views, partition keys and values, with its model of what the metastore holds as a guide):
databases; managed and external tables partitioned by STRING/INT/DATE keys (now and then a BIGINT, BOOLEAN or
TIMESTAMP one in place of the last, whose values hive_sql_random.py keeps to the millisecond), in TEXTFILE, ORC
and PARQUET;
transactional ORC tables (CLUSTERED BY ... INTO n BUCKETS); CREATE TABLE LIKE; views; partitions added (with
locations), renamed and moved; columns changed, added and replaced; properties, SerDe properties, renames and
locations; SHOW TABLES/PARTITIONS (partial specifications)/TBLPROPERTIES/COLUMNS/CREATE TABLE, DESCRIBE
[FORMATTED|EXTENDED] of tables, partitions and columns; SHOW LOCKS with another client's txn and lock
(HiveDriverScript.java's `!` lines: later DDL of that table waits for it, and fails), LOCK/UNLOCK TABLE
(which Hive 2.3's DbTxnManager refuses: "does not support explicit lock requests"), SHOW TRANSACTIONS, COMPACT,
SHOW COMPACTIONS, MSCK REPAIR, permanent functions (classes of hive-exec) and ANALYZE ... NOSCAN. Bad input
beside good: missing objects, names in upper case, values an INT or DATE key cannot hold.

Locations are under `{warehouse}`, each side's own directory, which the test fills in. Every script ends by
releasing what it holds (the other client's txn aborted) and dropping its databases, so the soak can
run one script after another on the same two metastores.

A transactional table's partitions are added, dropped and repaired, and it is altered, as any other
table's: Hive 2.3's DDLTask sends those writes without a txn, and the gateway runs each in a txn of its own
(gateway/thrift/own_txn.py). One that fails aborts that txn, which SHOW TRANSACTIONS then lists until
housekeeping forgets it, where Hive has no txn to list (the test's DELIBERATE rules).

Left out, each for its reason:
- A rename of a transactional table's partition: Hive 2.3 renames it, the gateway refuses it (README: a rename
  under a txn is not supported, and Thrift's rename_partition is not among the writes run in a txn of their
  own), and every later read of the table would differ (found by seed 1003 of the soak).
- A transactional table's rename: it leaves the table's directory where it is (README), where Hive 2.3 moves it,
  a difference in every later DESCRIBE FORMATTED.
- Data (LOAD DATA, INSERT): INSERT needs a MapReduce job, and a table with files gets file statistics from Hive's
  metastore only (the gateway reads no files: README), a difference in every later DESCRIBE.
- CREATE TABLE (not EXTERNAL) LIKE an external table: Hive 2.3's DDLTask sends it typed EXTERNAL_TABLE without
  EXTERNAL=TRUE, which Hive's metastore makes managed and the gateway keeps external, on purpose (the README:
  Hive would delete its data on drop; test_thrift_differential.py's KNOWN_DIFFERENCES), and every later read of
  the table would differ; LIKE an external one is drawn as CREATE EXTERNAL TABLE ... LIKE.
- A DROP DATABASE without CASCADE of a database holding transactional tables: it fails on both, and Hive 2.3's
  AcidEventListener, which Hive's metastore also tells of failed drops (its plain listeners hear every drop, with
  its outcome, which that listener does not read), deletes the database's compaction requests and history; the
  gateway's failed drop changes nothing, and every later SHOW COMPACTIONS would differ.
- A rename of a partition placed outside its default directory (Hive 2.3 moves it, the gateway leaves it:
  test_thrift_stateful_differential.py's RENAMED_IN_PLACE); an ADD of several partitions that fails on an
  existing one not first (hive_sql_random.py's docstring).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tests.spark.hive_sql_random import (DATABASES, KEYS, KEYS_OF_ANY_TABLE, TABLES, TYPED_KEYS, VIEWS, Generator,
                                         Part, Table)

FORMATS = ("TEXTFILE", "ORC", "PARQUET")
# Values a key cannot hold (Hive's engine checks a spec's values against the key's type).
BAD_VALUES = {"hr": ("x1", "1.5"), "ds": ("2024-02-30", "yesterday"), "cat": ("",), "n": ("x",), "b": ("maybe",),
              "ts": ("2024-13-01 00:00:00",)}
# Classes of hive-exec a permanent function can name; and one that does not exist.
UDF_CLASSES = ("org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper",
               "org.apache.hadoop.hive.ql.udf.UDFRepeat", "org.example.Missing")
FUNCTIONS = ("f1", "f2")


def drop_partition_drawn() -> bool:
    """DROP PARTITION is drawn unless HIVE_ENGINE_RANDOM_DROP_PARTITION=0."""
    return os.environ.get("HIVE_ENGINE_RANDOM_DROP_PARTITION") != "0"


@dataclass
class EngineTable(Table):
    acid: bool = False
    external: bool = False


class EngineGenerator(Generator):
    def __init__(self, seed: int, *, drop_partition: bool = False) -> None:
        super().__init__(seed)
        self.out = []
        self.drop_partition = drop_partition
        self.locked: set[str] = set()
        self.other_txn = False

    # -- helpers ------------------------------------------------------------------------------------------

    def cased(self, name: str) -> str:
        """The name, now and then in upper case (Hive's names are case-insensitive)."""
        return name.upper() if self.chance(0.1) else name

    def value(self, key: str) -> str:
        if self.chance(0.04):
            return self.rng.choice(BAD_VALUES[key])
        return super().value(key)

    def spec_item(self, key: str, v: str) -> str:
        return f"{key}={v}" if KEYS[key] == "INT" and v.lstrip("-").isdigit() else f"{key}='{v}'"

    def literal(self, key: str, v: str) -> str:
        return v if KEYS[key] == "INT" and v.lstrip("-").isdigit() else f"'{v}'"

    def table(self, *, partitioned: bool = False, acid: bool | None = None,
              existing: float = 0.9) -> tuple[str, str, EngineTable | None]:
        db, name, t = self.pick_table(partitioned=partitioned, existing=existing)
        assert t is None or isinstance(t, EngineTable)
        if t is not None and acid is not None and t.acid != acid:
            known = [(d, n, x) for d, ts in sorted(self.model.databases.items()) for n, x in sorted(ts.items())
                     if isinstance(x, EngineTable) and x.acid == acid and not x.view and (x.keys or not partitioned)]
            if not known:  # a name the database does not hold (not one of the other kind)
                free = [n for n in TABLES if n not in self.model.databases.get(db, {})]
                return db, self.rng.choice(free) if free else "t9", None
            return self.rng.choice(known)
        return db, name, t

    def partition_spec(self, t: EngineTable) -> str:
        """One of the table's partitions, a new one, or now and then a partial specification."""
        part = self.new_part(t)
        if len(t.keys) > 1 and self.chance(0.3):
            i = self.rng.randrange(len(t.keys))
            return f"PARTITION ({self.spec_item(t.keys[i], part[i])})"
        return self.spec(t.keys, part)

    # -- reads --------------------------------------------------------------------------------------------

    def read(self, db: str, name: str, t: Table | None) -> None:
        full = self.cased(f"{db}.{name}")
        choices = [f"DESCRIBE {full}", f"DESCRIBE EXTENDED {full}", f"DESCRIBE FORMATTED {full}",
                   f"SHOW TBLPROPERTIES {full}", f"SHOW TBLPROPERTIES {full}('tier')", f"SHOW COLUMNS IN {full}",
                   f"SHOW CREATE TABLE {full}", f"SHOW TABLES IN {db}", f"SHOW TABLES IN {db} '{name[0]}*'",
                   f"DESCRIBE {full} id", f"SHOW TABLE EXTENDED IN {db} LIKE '{name}'"]
        if t is not None and t.keys:
            choices += [f"SHOW PARTITIONS {full}"] * 3
            choices += [f"SHOW PARTITIONS {full} {self.partition_spec(t)}"] * 2  # type: ignore[arg-type]
            choices += [f"SELECT * FROM {full} WHERE {self.condition(t.keys)}"] * 2
            if t.parts:
                spec = self.spec(t.keys, self.rng.choice(sorted(t.parts)))
                choices += [f"DESCRIBE FORMATTED {full} {spec}", f"DESCRIBE EXTENDED {full} {spec}",
                            f"SHOW TABLE EXTENDED IN {db} LIKE '{name}' {spec}"]
        elif t is not None:
            choices.append(f"SELECT * FROM {full}")
        for statement in self.rng.sample(choices, self.rng.choice((1, 1, 2))):
            self.emit(statement)

    # -- writes -------------------------------------------------------------------------------------------

    def create_database(self) -> None:
        db = self.rng.choice(DATABASES)
        exists = db in self.model.databases
        clauses = f" COMMENT 'db {db}'" if self.chance(0.3) else ""
        clauses += f" LOCATION '{{warehouse}}/{db}_{self.next()}.db'"
        if self.chance(0.3):
            clauses += f" WITH DBPROPERTIES ('owner.team'='t{self.next() % 3}')"
        if_not = self.chance(0.5 if exists else 0.2)
        self.emit(f"CREATE DATABASE {'IF NOT EXISTS ' if if_not else ''}{self.cased(db)}{clauses}")
        self.model.databases.setdefault(db, {})
        self.emit(self.rng.choice(("SHOW DATABASES", "SHOW DATABASES LIKE 'd*'", f"DESCRIBE DATABASE {db}",
                                   f"DESCRIBE DATABASE EXTENDED {db}")))

    def alter_database(self) -> None:
        db = self.pick_db()
        self.emit(f"ALTER DATABASE {self.cased(db)} SET DBPROPERTIES ('tier'='{self.next() % 3}')")
        self.emit(f"DESCRIBE DATABASE EXTENDED {db}")

    def drop_database(self) -> None:
        db = self.pick_db()
        tables = self.model.databases.get(db, {})
        cascade = self.chance(0.6)
        # The other client's lock on a table name in it (of a table it holds or not) outlives the statement: the
        # drop's EXCLUSIVE lock on the database waits for it and fails, CASCADE or not, before the metastore is asked.
        locked = any(full.startswith(f"{db}.") for full in self.locked)
        if not cascade and any(isinstance(t, EngineTable) and t.acid for t in tables.values()):
            cascade = True  # one that fails on its transactional tables: see the module's docstring
        self.emit(f"DROP DATABASE {'IF EXISTS ' if self.chance(0.3) else ''}{self.cased(db)}"
                  f"{' CASCADE' if cascade else ''}")
        if db in self.model.databases and not locked and (cascade or not tables):
            del self.model.databases[db]
        self.emit("SHOW DATABASES")

    def create_table(self) -> None:
        db = self.pick_db()
        name = self.fresh_name(db)
        acid = self.chance(0.25)
        # The STRING/INT/DATE keys, and now and then one of another type in place of the last (BAD_VALUES has
        # values for each of those): KEYS holds hive_sql_random.py's keys of data source tables too.
        keys = self.rng.sample(KEYS_OF_ANY_TABLE, self.rng.choice((0, 1, 1, 2, 2) if not acid else (0, 0, 1)))
        if not acid and keys and self.chance(0.3):
            keys[-1] = self.rng.choice(sorted(TYPED_KEYS))
        external = not acid and self.chance(0.3)
        parts = [f"CREATE {'EXTERNAL ' if external else ''}TABLE "]
        if self.chance(0.15):
            parts.append("IF NOT EXISTS ")
        parts.append(f"{self.cased(db)}.{name} (id INT COMMENT 'the id', v STRING)")
        if self.chance(0.4):
            parts.append(f" COMMENT 'table {name}'")
        if keys:
            parts.append(" PARTITIONED BY (" + ", ".join(f"{k} {KEYS[k]}" for k in keys) + ")")
        if acid:
            parts.append(f" CLUSTERED BY (id) INTO {self.rng.choice((1, 2, 4))} BUCKETS STORED AS ORC")
        else:
            parts.append(f" STORED AS {self.rng.choice(FORMATS)}")
        if external or self.chance(0.1):
            parts.append(f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'")
        props = ["'transactional'='true'"] if acid else []
        if self.chance(0.4):
            props.append(f"'owner.team'='t{self.next() % 3}'")
        if props:
            parts.append(f" TBLPROPERTIES ({', '.join(props)})")
        self.emit("".join(parts))
        tables = self.model.databases.get(db)
        if tables is not None and name not in tables:
            tables[name] = EngineTable(["id", "v"], keys, acid=acid, external=external)
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def create_like(self) -> None:
        src_db, src, t = self.table()
        db = self.pick_db()
        name = self.fresh_name(db)
        location = f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'" if self.chance(0.3) else ""
        # LIKE an external table as EXTERNAL: see the module's docstring.
        external = t is not None and t.external
        self.emit(f"CREATE {'EXTERNAL ' if external else ''}TABLE {db}.{name} LIKE {self.cased(f'{src_db}.{src}')}"
                  f"{location}")
        tables = self.model.databases.get(db)
        if tables is not None and name not in tables and t is not None:
            tables[name] = EngineTable(list(t.columns), list(t.keys), acid=t.acid, external=external)
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def view(self) -> None:
        db, name, v = self.pick_table(view=True, existing=0.5)
        src_db, src, t = self.table()
        kind = self.rng.choice(("create", "create", "drop", "rename"))
        known = self.model.databases.get(db, {})
        if kind == "rename":
            new = self.fresh_name(db, VIEWS)
            self.emit(f"ALTER VIEW {db}.{name} RENAME TO {db}.{new}")
            if v is not None and new not in known:
                known[new] = known.pop(name)
            self.emit(f"SHOW TABLES IN {db}")
        elif kind == "drop":
            self.emit(f"DROP VIEW {'IF EXISTS ' if self.chance(0.4) else ''}{self.cased(f'{db}.{name}')}")
            if v is not None:
                del known[name]
            self.emit(f"SHOW TABLES IN {db}")
        else:
            cols = ", ".join((t.columns + t.keys) if t else ["id"])
            where = f" WHERE {self.condition(t.keys)}" if t and t.keys and self.chance(0.5) else ""
            self.emit(f"CREATE VIEW {'IF NOT EXISTS ' if self.chance(0.2) else ''}{db}.{name} AS "
                      f"SELECT {cols} FROM {src_db}.{src}{where}")
            if db in self.model.databases and t is not None and name not in known:
                known[name] = EngineTable([], [], view=True)
            self.emit(self.rng.choice((f"SELECT * FROM {db}.{name}", f"DESCRIBE FORMATTED {db}.{name}",
                                       f"SHOW CREATE TABLE {db}.{name}")))

    def add_partitions(self) -> None:
        db, name, t = self.table(partitioned=True)
        full = self.cased(f"{db}.{name}")
        if t is None or not t.keys:
            self.emit(f"ALTER TABLE {full} ADD PARTITION (ds='2024-01-01')")
            return
        specs: list[str] = []
        added: set[Part] = set()
        if_not = "IF NOT EXISTS " if self.chance(0.5) else ""
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            part = self.new_part(t)
            if part in added and not (if_not and part in t.parts):
                continue  # a new partition twice in one ADD: refused here, on purpose (README); one that
                # exists, twice with IF NOT EXISTS, is skipped as Hive skips it (Spark's MSCK REPAIR sends such)
            added.add(part)
            location = f" LOCATION '{{warehouse}}/parts/p{self.next()}'" if self.chance(0.3) else ""
            specs.insert(0 if part in t.parts and not if_not else len(specs), self.spec(t.keys, part) + location)
            if location and part not in t.parts:
                t.placed.add(part)
        if if_not or not added & t.parts:
            t.parts |= added
        self.emit(f"ALTER TABLE {full} ADD {if_not}{' '.join(specs)}")
        self.read(db, name, t)

    def drop_partitions(self) -> None:
        db, name, t = self.table(partitioned=True)
        full = self.cased(f"{db}.{name}")
        if t is None or not t.keys:
            self.emit(f"ALTER TABLE {full} DROP IF EXISTS PARTITION (hr=1)")
            return
        if_exists = "IF EXISTS " if self.chance(0.5) else ""
        if self.chance(0.25):  # a comparison: every partition it selects
            key = self.rng.choice(t.keys)
            v = self.value(key)
            op = self.rng.choice(("<", ">=", "<>"))
            self.emit(f"ALTER TABLE {full} DROP {if_exists}PARTITION ({key} {op} {self.literal(key, v)})")
            t.parts = set()  # the model does not compare values: it forgets the table's partitions
        else:
            specs = [self.partition_spec(t) for _ in range(self.rng.choice((1, 1, 2)))]
            self.emit(f"ALTER TABLE {full} DROP {if_exists}{', '.join(specs)}")
            for s in specs:
                t.parts = {p for p in t.parts if self.spec(t.keys, p) != s}
        self.emit(f"SHOW PARTITIONS {db}.{name}")

    def rename_partition(self) -> None:
        db, name, t = self.table(partitioned=True, acid=False)  # a transactional one's: the module's docstring
        if t is None or not t.keys or not t.parts - t.placed:
            return self.add_partitions()
        old = self.rng.choice(sorted(t.parts - t.placed))  # one placed elsewhere: see the module's docstring
        new = self.new_part(t)
        self.emit(f"ALTER TABLE {self.cased(f'{db}.{name}')} {self.spec(t.keys, old)} RENAME TO "
                  f"{self.spec(t.keys, new)}")
        if new not in t.parts:
            t.parts.discard(old)
            t.parts.add(new)
        self.read(db, name, t)

    def alter_table(self) -> None:
        kind = self.rng.choice(("add_columns", "change", "replace", "set_props", "unset_props", "serde", "location",
                                "part_location", "rename", "rename"))
        # A transactional table's rename leaves its directory where it is: see the module's docstring.
        db, name, t = self.table(acid=False if kind == "rename" else None)
        full = self.cased(f"{db}.{name}")
        if kind == "add_columns":
            c = f"c{self.next()}"
            self.emit(f"ALTER TABLE {full} ADD COLUMNS ({c} STRING COMMENT 'added {c}')")
            if t is not None:
                t.columns.append(c)
        elif kind == "change":
            col = self.rng.choice(t.columns) if t and t.columns else "v"
            new = col if self.chance(0.6) else f"c{self.next()}"
            kind_of = self.rng.choice(("INT", "BIGINT", "STRING")) if col == "id" else "STRING"
            self.emit(f"ALTER TABLE {full} CHANGE COLUMN {col.upper() if self.chance(0.2) else col} {new} {kind_of} "
                      f"COMMENT 'now {self.next()}'")
            if t is not None and col in t.columns:
                t.columns[t.columns.index(col)] = new
        elif kind == "replace":
            self.emit(f"ALTER TABLE {full} REPLACE COLUMNS (id INT, v STRING COMMENT 'replaced')")
            if t is not None:
                t.columns = ["id", "v"]
        elif kind == "set_props":
            self.emit(f"ALTER TABLE {full} SET TBLPROPERTIES ('k{self.next() % 3}'='v{self.next()}', 'tier'='2')")
        elif kind == "unset_props":
            self.emit(f"ALTER TABLE {full} UNSET TBLPROPERTIES {'IF EXISTS ' if self.chance(0.5) else ''}"
                      f"('tier', 'k{self.next() % 3}')")
        elif kind == "serde":
            spec = self.some_partition(t)
            self.emit(f"ALTER TABLE {full}{spec} SET SERDEPROPERTIES ('field.delim'=',', 'note'='s{self.next()}')")
        elif kind == "location":
            self.emit(f"ALTER TABLE {full} SET LOCATION '{{warehouse}}/moved/{name}_{self.next()}'")
            if t is not None:  # its partitions stay where they are: outside the new default directories
                t.placed |= t.parts
        elif kind == "part_location":
            if t is None or not t.parts:
                return self.add_partitions()
            part = self.rng.choice(sorted(t.parts))
            t.placed.add(part)
            self.emit(f"ALTER TABLE {full} {self.spec(t.keys, part)} SET LOCATION "
                      f"'{{warehouse}}/moved/p{self.next()}'")
        else:
            new_db = db if self.chance(0.8) else self.pick_db()
            new = self.rng.choice(TABLES)
            self.emit(f"ALTER TABLE {full} RENAME TO {new_db}.{new}")
            source = self.model.databases.get(db, {})
            target = self.model.databases.get(new_db)
            if t is not None and target is not None and new not in target and f"{db}.{name}" not in self.locked:
                target[new] = source.pop(name)
                db, name = new_db, new
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def locks(self) -> None:
        db, name, t = self.table()
        full = f"{db}.{name}"
        kind = self.rng.choice(("lock", "other", "other", "show", "show"))
        if kind == "lock":  # refused by Hive 2.3's DbTxnManager ("does not support explicit lock requests")
            if self.chance(0.6):
                self.emit(f"LOCK TABLE {self.cased(full)} {self.rng.choice(('SHARED', 'EXCLUSIVE'))}")
            else:
                self.emit(f"UNLOCK TABLE {self.cased(full)}")
        elif kind == "other":
            # Another client's txn and SHARED_READ lock: a later DDL of the table waits for it and fails (on both).
            if not self.other_txn:
                self.emit("!open_txn")
                self.other_txn = True
                self.emit(f"!lock_shared {full}")
                self.locked.add(full)  # a lock is by name: taken for a table the database does not hold too
            else:
                self.emit("!abort_txn")
                self.other_txn = False
                self.locked.clear()
        self.emit(self.rng.choice(("SHOW LOCKS", "SHOW LOCKS EXTENDED", f"SHOW LOCKS {self.cased(full)}",
                                   f"SHOW LOCKS {full} EXTENDED", "SHOW TRANSACTIONS")))

    def compact(self) -> None:
        db, name, t = self.table(acid=True if self.chance(0.8) else None)
        full = self.cased(f"{db}.{name}")
        spec = self.some_partition(t)
        if t is not None and t.keys and not spec and self.chance(0.3):
            spec = " " + self.spec(t.keys, tuple(self.value(k) for k in t.keys))  # likely missing
        self.emit(f"ALTER TABLE {full}{spec} COMPACT '{self.rng.choice(('major', 'minor'))}'")
        self.emit("SHOW COMPACTIONS")

    def repair(self) -> None:
        db, name, t = self.table(partitioned=True)
        self.emit(f"MSCK REPAIR TABLE {self.cased(f'{db}.{name}')}")
        self.emit(f"SHOW PARTITIONS {db}.{name}")

    def function(self) -> None:
        db = self.pick_db()
        name = f"{db}.{self.rng.choice(FUNCTIONS)}"
        kind = self.rng.choice(("create", "create", "drop", "use"))
        if kind == "create":
            self.emit(f"CREATE FUNCTION {self.cased(name)} AS '{self.rng.choice(UDF_CLASSES)}'")
        elif kind == "drop":
            self.emit(f"DROP FUNCTION {'IF EXISTS ' if self.chance(0.4) else ''}{name}")
        else:
            tdb, tname, t = self.table(acid=False)
            self.emit(f"SELECT {name}(v) FROM {tdb}.{tname}")
        self.emit(self.rng.choice((f"SHOW FUNCTIONS LIKE '{db}.*'", f"DESCRIBE FUNCTION {name}")))

    def analyze(self) -> None:
        db, name, t = self.table()
        spec = ""
        if t is not None and t.parts and self.chance(0.5):
            spec = f" {self.spec(t.keys, self.rng.choice(sorted(t.parts)))}"
        elif t is not None and t.keys and self.chance(0.3):
            spec = f" PARTITION ({', '.join(t.keys)})"  # every partition
        self.emit(f"ANALYZE TABLE {self.cased(f'{db}.{name}')}{spec} COMPUTE STATISTICS NOSCAN")
        self.read(db, name, t)

    def drop_table(self) -> None:
        db, name, t = self.table(existing=0.7)
        full = f"{db}.{name}"
        self.emit(f"DROP TABLE {'IF EXISTS ' if self.chance(0.3) else ''}{self.cased(full)}")
        if t is not None and full not in self.locked:
            del self.model.databases[db][name]
        self.emit(f"SHOW TABLES IN {db}")

    # -- the script ---------------------------------------------------------------------------------------

    def step(self) -> None:
        if len(self.model.databases) < 2 and self.chance(0.6):
            return self.create_database()
        if sum(len(t) for t in self.model.databases.values()) < 2 and self.chance(0.6):
            return self.create_table()
        actions = [(self.create_database, 2), (self.drop_database, 1), (self.alter_database, 1),
                   (self.create_table, 7), (self.create_like, 2), (self.view, 2), (self.add_partitions, 6),
                   (self.rename_partition, 2), (self.alter_table, 7), (self.locks, 3), (self.compact, 2),
                   (self.repair, 1), (self.function, 2), (self.analyze, 1), (self.drop_table, 2)]
        if self.drop_partition:
            actions.append((self.drop_partitions, 3))
        action = self.rng.choices([a for a, _ in actions], [w for _, w in actions])[0]
        action()

    def script(self, statements: int) -> list[str]:
        while len(self.out) < statements:
            self.step()
        if self.other_txn:
            self.emit("!abort_txn")
        for db in DATABASES:
            if db in self.model.databases:
                for function in FUNCTIONS:
                    self.emit(f"DROP FUNCTION IF EXISTS {db}.{function}")
        for db in DATABASES:
            self.emit(f"DROP DATABASE IF EXISTS {db} CASCADE")
        return self.out


def script(seed: int, statements: int, *, drop_partition: bool | None = None) -> list[str]:
    """About `statements` statements (a step's reads may pass it), drawn from `seed`, then the clean-up."""
    drawn = drop_partition_drawn() if drop_partition is None else drop_partition
    return EngineGenerator(seed, drop_partition=drawn).script(statements)


if __name__ == "__main__":
    import sys

    print("\n".join(script(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40)))
