"""Random Spark SQL scripts over non-ACID Hive tables, from a seed: the statements a data engineer runs.

`script(seed, steps)` draws `steps` writes (databases, tables, views, inserts, partitions, alters, statistics,
repairs), each often followed by reads of what it touched (SHOW, DESCRIBE, SELECTs whose partition filters
Spark pushes down to the metastore). Names come from a small pool, so collisions, renames onto existing
names and missing objects come up. A model of what the metastore holds steers the draws towards statements
that mean something; it is a guide, not an oracle (the test compares the two metastores, not the model).

The default database is left alone: its location is each metastore's own warehouse (the gateway's
`hive.metastore.warehouse.dir`, not the test's), so every table in it would differ by nature.

Three things are not drawn, as their differences would repeat in every later read: a rename of a partition
placed outside its default directory (Hive 2.3 moves it to the new name's default directory, the gateway
leaves it where its owner put it: test_thrift_stateful_differential.py's RENAMED_IN_PLACE), and a drop of a
partition whose value has a '.' (Spark drops what the metastore's get_partition_names_ps lists for the
specification, a whole one too; Hive 2.3 lists every name the value matches as a pattern, so DROP PARTITION
(cat='a.b') drops cat=axb and cat=a b as well; the gateway lists only a.b: the README's partial
specifications). SHOW PARTITIONS by such a specification is drawn, its difference listed. And an
ADD of several partitions that fails on one that exists names that one first: Hive 2.3 makes the directories
of those before it in threads of its own and, failing, deletes only those its threads have reported, so a
directory may stay behind for a later MSCK REPAIR to find (the gateway refuses the ADD before it makes any).

A rename across databases is drawn now and then, though Spark refuses it before it reaches the metastore.
Spark's grammar takes no comparison in DROP PARTITION (`PARTITION (hr > 3)` is a PARSE_SYNTAX_ERROR before
the metastore is asked), so the drops of several partitions at once are partial specifications
(`PARTITION (hr=1)` of a table partitioned by ds and hr), which Spark lists through the metastore.

Every statement is written so that its answer compares: SELECTs order by every column they return;
locations are under `{warehouse}`, which hive_sql_script.py fills in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

DATABASES = ("d1", "d2")
TABLES = ("t1", "t2", "t3")
VIEWS = ("v1", "v2")
FORMATS = ("PARQUET", "ORC", "TEXTFILE")
# Partition keys by type, and the values drawn for each: strings a path escapes, ints, dates.
KEYS = {"cat": "STRING", "hr": "INT", "ds": "DATE"}
VALUES = {
    # a.b and axb: a partial specification Hive 2.3 matches as a pattern (`.` any character), which Spark
    # works around; the answers through Spark must agree.
    "cat": ("a b", "x/y", "k=v", "1:2", "50%", "ü日", "plain", "Z", "a.b", "axb"),
    "hr": ("1", "2", "3", "10", "-1"),
    "ds": ("2024-01-01", "2024-01-02", "2024-02-29", "2023-12-31"),
}

Part = tuple[str, ...]


@dataclass
class Table:
    columns: list[str]
    keys: list[str]
    view: bool = False
    parts: set[Part] = field(default_factory=set)
    placed: set[Part] = field(default_factory=set)  # partitions outside their default directory


@dataclass
class Model:
    """What the script has made so far, as far as the generator can tell."""

    databases: dict[str, dict[str, Table]] = field(default_factory=dict)


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.model = Model()
        self.out: list[str] = ["SET hive.exec.dynamic.partition.mode=nonstrict"]
        self.counter = 0  # row ids and directory names, unique in the script

    # -- helpers ------------------------------------------------------------------------------------------

    def next(self) -> int:
        self.counter += 1
        return self.counter

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick_db(self, existing: float = 0.9) -> str:
        dbs = sorted(self.model.databases)
        if dbs and self.chance(existing):
            return self.rng.choice(dbs)
        return self.rng.choice(DATABASES)

    def pick_table(self, *, view: bool = False, partitioned: bool = False,
                   existing: float = 0.9) -> tuple[str, str, Table | None]:
        """A table (or view) the model knows, or now and then any name of the pool (maybe missing)."""
        known = [(db, name, t) for db, tables in self.model.databases.items() for name, t in tables.items()
                 if t.view == view and (not partitioned or t.keys)]
        if known and self.chance(existing):
            return self.rng.choice(sorted(known, key=lambda k: (k[0], k[1])))
        db, name = self.pick_db(), self.rng.choice(VIEWS if view else TABLES)
        return db, name, self.model.databases.get(db, {}).get(name)

    def fresh_name(self, db: str, pool: tuple[str, ...] = TABLES) -> str:
        """Mostly a name `db` does not hold yet; now and then any (a collision)."""
        free = [n for n in pool if n not in self.model.databases.get(db, {})]
        return self.rng.choice(free if free and self.chance(0.85) else pool)

    def value(self, key: str) -> str:
        return self.rng.choice(VALUES[key])

    def literal(self, key: str, v: str) -> str:
        """The value as an expression (VALUES lists, WHERE)."""
        if KEYS[key] == "INT":
            return v
        if KEYS[key] == "DATE":
            return f"DATE'{v}'"
        return f"'{v}'"

    def spec_item(self, key: str, v: str) -> str:
        return f"{key}={v}" if KEYS[key] == "INT" else f"{key}='{v}'"

    def spec(self, keys: list[str], part: Part) -> str:
        return "PARTITION (" + ", ".join(self.spec_item(k, v) for k, v in zip(keys, part)) + ")"

    def new_part(self, t: Table) -> Part:
        if t.parts and self.chance(0.4):
            return self.rng.choice(sorted(t.parts))
        return tuple(self.value(k) for k in t.keys)

    def some_partition(self, t: Table | None) -> str:
        """Now and then one of the table's partitions (` PARTITION (...)`), else nothing."""
        return f" {self.spec(t.keys, self.rng.choice(sorted(t.parts)))}" if t and t.parts and self.chance(0.4) else ""

    def undotted(self, part: Part) -> Part:
        """The values of a partition to drop, without a '.' (matched as a pattern by Hive 2.3: the module's
        docstring)."""
        return tuple("plain" if "." in v else v for v in part)

    def row(self, t: Table) -> list[str]:
        n = self.next()  # a CTAS's columns include the source's partition keys, of their types
        return [str(n) if c == "id" else self.literal(c, self.value(c)) if c in KEYS else f"'r{n}'"
                for c in t.columns]

    def emit(self, statement: str) -> None:
        self.out.append(statement)

    # -- reads --------------------------------------------------------------------------------------------

    def read(self, db: str, name: str, t: Table | None) -> None:
        full = f"{db}.{name}"
        choices = [f"DESCRIBE {full}", f"DESCRIBE EXTENDED {full}", f"DESCRIBE FORMATTED {full}",
                   f"SHOW TBLPROPERTIES {full}", f"SHOW TBLPROPERTIES {full} ('tier')", f"SHOW COLUMNS IN {full}",
                   f"SHOW CREATE TABLE {full} AS SERDE",
                   f"SHOW TABLE EXTENDED IN {db} LIKE '{name[0]}*'", f"SHOW TABLES IN {db}", f"SHOW VIEWS IN {db}"]
        if t is not None and not t.view:
            choices += [self.select(full, t)] * 4 + [f"DESCRIBE EXTENDED {full} id"]
        if t is not None and t.keys:
            choices += [f"SHOW PARTITIONS {full}"] * 2
            if t.parts:
                part = self.rng.choice(sorted(t.parts))
                choices += [f"DESCRIBE EXTENDED {full} {self.spec(t.keys, part)}",
                            f"DESCRIBE FORMATTED {full} {self.spec(t.keys, part)}",
                            f"SHOW PARTITIONS {full} PARTITION ({self.spec_item(t.keys[-1], part[-1])})",
                            f"SHOW PARTITIONS {full} PARTITION ({self.spec_item(t.keys[0], part[0])})",
                            f"SHOW TABLE EXTENDED IN {db} LIKE '{name}' {self.spec(t.keys, part)}"]
        self.emit(self.rng.choice(choices))

    def select(self, full: str, t: Table) -> str:
        columns = ", ".join(t.columns + t.keys)
        where = f" WHERE {self.condition(t.keys)}" if t.keys and self.chance(0.85) else ""
        return f"SELECT {columns} FROM {full}{where} ORDER BY {columns}"

    def condition(self, keys: list[str], depth: int = 0) -> str:
        if depth < 1 and self.chance(0.3):
            op = self.rng.choice(("AND", "OR"))
            return f"({self.condition(keys, depth + 1)} {op} {self.condition(keys, depth + 1)})"
        key = self.rng.choice(keys)
        kind = self.rng.choice(("=", "<", ">=", ">", "<>", "IN", "NOT IN") + (("LIKE",) * 2 if KEYS[key] == "STRING"
                                                                          else ()))
        if kind in ("IN", "NOT IN"):
            vs = self.rng.sample(VALUES[key], 2)
            return f"{key} {kind} ({', '.join(self.literal(key, v) for v in vs)})"
        if kind == "LIKE":
            v = self.value(key)
            pattern = self.rng.choice((v[:1] + "%", "%" + v[-1:], "%" + v[1:2] + "%", v))
            return f"{key} LIKE '{pattern}'"
        return f"{key} {kind} {self.literal(key, self.value(key))}"

    # -- writes -------------------------------------------------------------------------------------------

    def create_database(self) -> None:
        free = [d for d in DATABASES if d not in self.model.databases]
        db = self.rng.choice(free if free and self.chance(0.75) else DATABASES)
        exists = db in self.model.databases
        clauses = ""
        if self.chance(0.4):
            clauses += f" COMMENT 'about {db}'"
        if self.chance(0.3):
            clauses += f" LOCATION '{{warehouse}}/dbs/{db}_{self.next()}'"
        if self.chance(0.4):
            clauses += f" WITH DBPROPERTIES ('owner.team'='t{self.next() % 3}', 'tier'='1')"
        if_not = self.chance(0.5 if exists else 0.2)
        self.emit(f"CREATE DATABASE {'IF NOT EXISTS ' if if_not else ''}{db}{clauses}")
        self.model.databases.setdefault(db, {})
        self.emit(self.rng.choice(("SHOW DATABASES", f"DESCRIBE DATABASE EXTENDED {db}")))

    def alter_database(self) -> None:
        db = self.pick_db()
        self.emit(f"ALTER DATABASE {db} SET DBPROPERTIES ('tier'='{self.next() % 3}', 'note'='ä b')")
        self.emit(f"DESCRIBE DATABASE EXTENDED {db}")

    def drop_database(self) -> None:
        db = self.pick_db()
        cascade = self.chance(0.6)
        if_exists = self.chance(0.3)
        self.emit(f"DROP DATABASE {'IF EXISTS ' if if_exists else ''}{db}{' CASCADE' if cascade else ''}")
        if db in self.model.databases and (cascade or not self.model.databases[db]):
            del self.model.databases[db]
        self.emit("SHOW DATABASES")

    def create_table(self) -> None:
        db = self.pick_db()
        name = self.fresh_name(db)
        keys = self.rng.sample(sorted(KEYS), self.rng.choice((0, 1, 1, 2, 2)))
        fmt = self.rng.choice(FORMATS)
        external = self.chance(0.3)
        parts = [f"CREATE {'EXTERNAL ' if external else ''}TABLE "]
        if self.chance(0.15):
            parts.append("IF NOT EXISTS ")
        parts.append(f"{db}.{name} (id INT COMMENT 'the id', v STRING)")
        if self.chance(0.4):
            parts.append(f" COMMENT 'table {name}'")
        if keys:
            # Now and then declared in upper case: Spark keeps the case (its directories `Cat=x`), the
            # metastore's names are lower case.
            spelled = [k.capitalize() if self.chance(0.25) else k for k in keys]
            parts.append(" PARTITIONED BY (" + ", ".join(f"{k} {KEYS[k.lower()]}" for k in spelled) + ")")
        parts.append(f" STORED AS {fmt}")
        if external or self.chance(0.1):
            # Two directories a name: a table made again there finds the files (and partition
            # directories, for MSCK) an external one left.
            parts.append(f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'")
        if self.chance(0.4):
            parts.append(f" TBLPROPERTIES ('owner.team'='t{self.next() % 3}', 'note'='n ü')")
        self.emit("".join(parts))
        tables = self.model.databases.get(db)
        if tables is not None and name not in tables:
            tables[name] = Table(["id", "v"], keys)
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def create_table_as(self) -> None:
        src_db, src, t = self.pick_table()
        db = self.pick_db()
        name = self.fresh_name(db)
        if self.chance(0.5) or t is None:
            fmt = self.rng.choice(FORMATS)
            self.emit(f"CREATE TABLE {db}.{name} STORED AS {fmt} AS SELECT * FROM {src_db}.{src}")
            made = Table((t.columns + t.keys) if t else ["id", "v"], [])
        else:
            location = f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'" if self.chance(0.3) else ""
            self.emit(f"CREATE TABLE {db}.{name} LIKE {src_db}.{src}{location}")
            made = Table(list(t.columns), list(t.keys))
        tables = self.model.databases.get(db)
        if tables is not None and name not in tables and t is not None:
            tables[name] = made
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def view(self) -> None:
        db, name, v = self.pick_table(view=True, existing=0.5)
        src_db, src, t = self.pick_table()
        cols = ", ".join((t.columns + t.keys) if t else ["id"])
        where = f" WHERE {self.condition(t.keys)}" if t and t.keys and self.chance(0.5) else ""
        kind = self.rng.choice(("create", "create", "alter", "drop", "rename"))
        if kind == "rename":
            new = self.fresh_name(db, VIEWS)
            self.emit(f"ALTER VIEW {db}.{name} RENAME TO {db}.{new}")
            known = self.model.databases.get(db, {})
            if v is not None and new not in known:
                known[new] = known.pop(name)
            self.emit(f"SHOW VIEWS IN {db}")
            return
        if kind == "drop":
            self.emit(f"DROP VIEW {'IF EXISTS ' if self.chance(0.4) else ''}{db}.{name}")
            if v is not None:
                del self.model.databases[db][name]
            self.emit(f"SHOW VIEWS IN {db}")
            return
        verb = "ALTER VIEW" if kind == "alter" else "CREATE VIEW"
        self.emit(f"{verb} {db}.{name} AS SELECT {cols} FROM {src_db}.{src}{where}")
        tables = self.model.databases.get(db)
        if tables is not None and t is not None and name not in tables and kind == "create":
            tables[name] = Table([], [], view=True)
        if tables is not None and name in tables and tables[name].view:
            order = ", ".join(str(i + 1) for i in range(len(cols.split(","))))
            self.emit(f"SELECT * FROM {db}.{name} ORDER BY {order}")
        else:
            self.read(db, name, tables.get(name) if tables else None)

    def insert(self) -> None:
        db, name, t = self.pick_table()
        if t is None:
            self.emit(f"INSERT INTO {db}.{name} VALUES (1, 'x')")
            return
        verb = "INSERT OVERWRITE TABLE" if self.chance(0.3) else "INSERT INTO"
        rows = [self.row(t) for _ in range(self.rng.choice((1, 2)))]
        if not t.keys:
            self.emit(f"{verb} {db}.{name} VALUES " + ", ".join(f"({', '.join(r)})" for r in rows))
        else:
            static = self.rng.choice(range(len(t.keys) + 1))  # how many leading keys are static
            part = self.new_part(t)
            spec = ", ".join(self.spec_item(k, v) if i < static else k for i, (k, v) in enumerate(zip(t.keys, part)))
            values = []
            for r in rows:
                dyn = [self.literal(k, self.value(k) if len(rows) > 1 and self.chance(0.5) else v)
                       for k, v in list(zip(t.keys, part))[static:]]
                if dyn and self.chance(0.08):  # the default partition (__HIVE_DEFAULT_PARTITION__)
                    dyn[-1] = "NULL"
                values.append(f"({', '.join(r + dyn)})")
                if "NULL" not in dyn:  # a spec cannot name the default partition's value: left out of the model
                    t.parts.add(tuple(part[:static]) + tuple(d.removeprefix("DATE").strip("'") for d in dyn))
            self.emit(f"{verb} {db}.{name} PARTITION ({spec}) VALUES " + ", ".join(values))
        self.read(db, name, t)

    def add_partitions(self) -> None:
        db, name, t = self.pick_table(partitioned=True)
        if t is None or not t.keys:
            self.emit(f"ALTER TABLE {db}.{name} ADD PARTITION (ds='2024-01-01')")
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
            spec = self.spec(t.keys, part) + location
            # One that exists goes first when the ADD fails on it (see the module's docstring).
            specs.insert(0 if part in t.parts and not if_not else len(specs), spec)
            if location and part not in t.parts:
                t.placed.add(part)
        if if_not or not added & t.parts:
            t.parts |= added
        self.emit(f"ALTER TABLE {db}.{name} ADD {if_not}{' '.join(specs)}")
        self.read(db, name, t)

    def drop_partitions(self) -> None:
        db, name, t = self.pick_table(partitioned=True)
        if t is None or not t.keys:
            self.emit(f"ALTER TABLE {db}.{name} DROP IF EXISTS PARTITION (hr=1)")
            return
        if_exists = "IF EXISTS " if self.chance(0.5) else ""
        if len(t.keys) > 1 and self.chance(0.35):  # a partial specification: every partition it matches
            i = self.rng.randrange(len(t.keys))
            part = self.undotted(self.new_part(t))
            self.emit(f"ALTER TABLE {db}.{name} DROP {if_exists}PARTITION ({self.spec_item(t.keys[i], part[i])})")
            t.parts = {p for p in t.parts if p[i] != part[i]}
        else:
            specs = [self.spec(t.keys, self.undotted(self.new_part(t))) for _ in range(self.rng.choice((1, 1, 2)))]
            self.emit(f"ALTER TABLE {db}.{name} DROP {if_exists}{', '.join(specs)}")
            for s in specs:
                t.parts = {p for p in t.parts if self.spec(t.keys, p) != s}
        self.emit(f"SHOW PARTITIONS {db}.{name}")

    def rename_partition(self) -> None:
        db, name, t = self.pick_table(partitioned=True)
        if t is None or not t.keys or not t.parts - t.placed:
            return self.add_partitions()
        old = self.rng.choice(sorted(t.parts - t.placed))  # one placed elsewhere: see the module's docstring
        new = self.new_part(t)
        self.emit(f"ALTER TABLE {db}.{name} {self.spec(t.keys, old)} RENAME TO {self.spec(t.keys, new)}")
        if new not in t.parts:
            t.parts.discard(old)
            t.parts.add(new)
        self.read(db, name, t)

    def alter_table(self) -> None:
        db, name, t = self.pick_table()
        full = f"{db}.{name}"
        kind = self.rng.choice(("add_columns", "change_comment", "set_props", "unset_props", "serde",
                                "location", "part_location", "truncate", "rename", "rename"))
        if kind == "add_columns":
            c = f"c{self.next()}"
            self.emit(f"ALTER TABLE {full} ADD COLUMNS ({c} STRING COMMENT 'added {c}')")
            if t is not None:
                t.columns.append(c)
        elif kind == "change_comment":
            col = self.rng.choice(t.columns) if t else "v"
            self.emit(f"ALTER TABLE {full} CHANGE COLUMN {col} {col} {'INT' if col == 'id' else 'STRING'} "
                      f"COMMENT 'now {self.next()}'")
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
            if t is not None:
                t.placed |= t.parts
        elif kind == "part_location":
            if t is None or not t.parts:
                return self.add_partitions()
            part = self.rng.choice(sorted(t.parts))
            t.placed.add(part)
            self.emit(f"ALTER TABLE {full} {self.spec(t.keys, part)} SET LOCATION '{{warehouse}}/moved/p{self.next()}'")
        elif kind == "truncate":
            spec = self.some_partition(t)
            if spec and t is not None and len(t.keys) > 1 and self.chance(0.5):  # a partial specification
                part = self.rng.choice(sorted(t.parts))
                spec = f" PARTITION ({self.spec_item(t.keys[-1], part[-1])})"
            self.emit(f"TRUNCATE TABLE {full}{spec}")
        else:
            new_db = db if self.chance(0.75) else self.pick_db()
            new = self.rng.choice(TABLES)
            self.emit(f"ALTER TABLE {full} RENAME TO {new_db}.{new}")
            tables = self.model.databases.get(db, {})
            if t is not None and new_db == db and new not in tables:
                tables[new] = tables.pop(name)
                name, full = new, f"{db}.{new}"
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def analyze(self) -> None:
        db, name, t = self.pick_table()
        full = f"{db}.{name}"
        spec = ""
        if t is not None and t.parts and self.chance(0.5):
            spec = f" {self.spec(t.keys, self.rng.choice(sorted(t.parts)))}"
        elif t is not None and t.keys and self.chance(0.2):
            spec = f" PARTITION ({', '.join(t.keys)})"  # every partition
        what = self.rng.choice(("", " NOSCAN", " FOR COLUMNS id, v", " FOR COLUMNS id"))
        if spec and what.startswith(" FOR"):
            what = " FOR COLUMNS id"
        self.emit(f"ANALYZE TABLE {full}{spec} COMPUTE STATISTICS{what}")
        if t is not None and self.chance(0.5):
            self.emit(f"DESCRIBE EXTENDED {full} id")
        else:
            self.read(db, name, t)

    def repair(self) -> None:
        db, name, t = self.pick_table(partitioned=True)
        self.emit(self.rng.choice((f"MSCK REPAIR TABLE {db}.{name}", f"ALTER TABLE {db}.{name} RECOVER PARTITIONS",
                                   f"MSCK REPAIR TABLE {db}.{name} SYNC PARTITIONS",
                                   f"MSCK REPAIR TABLE {db}.{name} DROP PARTITIONS")))
        self.emit(f"SHOW PARTITIONS {db}.{name}")

    def drop_table(self) -> None:
        db, name, t = self.pick_table(existing=0.7)
        self.emit(f"DROP TABLE {'IF EXISTS ' if self.chance(0.3) else ''}{db}.{name}")
        if t is not None:
            del self.model.databases[db][name]
        self.emit(f"SHOW TABLES IN {db}")

    # -- the script ---------------------------------------------------------------------------------------

    def step(self) -> None:
        if len(self.model.databases) < 2 and self.chance(0.6):
            return self.create_database()
        if sum(len(t) for t in self.model.databases.values()) < 2 and self.chance(0.6):
            return self.create_table()
        actions = [(self.create_database, 2), (self.drop_database, 1), (self.alter_database, 1), (self.create_table, 6),
                   (self.create_table_as, 2), (self.view, 2), (self.insert, 9), (self.add_partitions, 4),
                   (self.drop_partitions, 3), (self.rename_partition, 2), (self.alter_table, 6),
                   (self.analyze, 2), (self.repair, 1), (self.drop_table, 2)]
        action = self.rng.choices([a for a, _ in actions], [w for _, w in actions])[0]
        action()

    def script(self, statements: int) -> list[str]:
        while len(self.out) < statements:
            self.step()
        return self.out


def script(seed: int, statements: int) -> list[str]:
    """About `statements` statements (a step's reads may pass it), drawn from `seed`."""
    return Generator(seed).script(statements)


if __name__ == "__main__":
    import sys

    print("\n".join(script(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40)))
