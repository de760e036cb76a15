"""Random Spark SQL scripts over non-ACID Hive tables, from a seed: the statements a data engineer runs.

`script(seed, steps)` draws `steps` writes (databases, tables, views, inserts, partitions, alters, statistics,
repairs, permanent functions), each often followed by reads of what it touched (SHOW, DESCRIBE, SELECTs whose
partition filters Spark pushes down to the metastore). Names come from a small pool, so collisions, renames
onto existing names and missing objects come up. A model of what the metastore holds steers the draws towards
statements that mean something; it is a guide, not an oracle (the test compares the two metastores, not the
model).

Tables are Hive tables (STORED AS, some bucketed, some delimited text) or Spark's data source tables (USING
parquet, orc, json or csv: their schema kept in table properties, partitions in the metastore), with options,
a location (LOCATION or the `path` option), bucketing, and now and then a column or partition column named by
what is not a word (`a:b`, `event day`, `k:v`, the keys also in upper case, which Spark keeps in its
directories) or a key of another type (BIGINT, BOOLEAN, TIMESTAMP, and a data source table's TIMESTAMP_NTZ,
which Hive has no type for). Inserts are static and dynamic, into and over, with
spark.sql.sources.partitionOverwriteMode static or dynamic; functions are created (also again, replaced),
dropped, described, listed and called; names are listed by patterns (`*`, `|`, a regular expression's
characters).

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

Nor are two differences by design: COMMENT ON DATABASE (alter_database changes the description, where Hive
2.3 keeps it: the README's deliberate differences), and a table made transactional (TBLPROPERTIES
('transactional'='true'): the gateway's ACID tables may be of any format, where Hive 2.3 takes only bucketed
ORC ones and refuses the CREATE or the ALTER).

A rename across databases is drawn now and then, though Spark refuses it before it reaches the metastore.
Spark's grammar takes no comparison in DROP PARTITION (`PARTITION (hr > 3)` is a PARSE_SYNTAX_ERROR before
the metastore is asked), so the drops of several partitions at once are partial specifications
(`PARTITION (hr=1)` of a table partitioned by ds and hr), which Spark lists through the metastore.

Every statement is written so that its answer compares: SELECTs order by every column they return;
locations are under `{warehouse}`, which hive_sql_script.py fills in.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

DATABASES = ("d1", "d2")
TABLES = ("t1", "t2", "t3")
VIEWS = ("v1", "v2")
FUNCTIONS = ("f1", "f2")
FORMATS = ("PARQUET", "ORC", "TEXTFILE")
# Spark's data source tables (CREATE TABLE ... USING), with options each provider reads: Spark keeps their
# schema in table properties (spark.sql.sources.*), their options among the storage's serde parameters, and
# parquet and orc ones in a form Hive reads too, the others (and bucketed ones) in Spark's own.
PROVIDERS = {
    "parquet": "'compression'='snappy'",
    "orc": "'compression'='zlib'",
    "json": "'multiLine'='false', 'dateFormat'='yyyy-MM-dd'",
    "csv": "'header'='true', 'sep'='|'",
}
# Classes of Hive's UDFs in pyspark's jars, for permanent functions (and one that is not there).
UDFS = ("org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper",
        "org.apache.hadoop.hive.ql.udf.generic.GenericUDFLower",
        "org.apache.hadoop.hive.ql.udf.UDFReverse")
MISSING_UDF = "org.example.NoSuchUDF"  # (and '', which Hive stores too)
# Name patterns of SHOW TABLES/VIEWS/TABLE EXTENDED/USER FUNCTIONS ... LIKE and SHOW DATABASES LIKE, which the
# metastore matches (Hive's: `*` any run, `|` between alternatives, the rest a Java regular expression,
# ignoring case).
PATTERNS = ("t*", "*1", "t1|v*", "T*", "*", "t1|t2", "*2|*3", "x*", "v?", "t[12]", "t.", "f*", "F1|v2", "d*",
            "t1 | v1")
# Partition keys by type, and the values drawn for each: strings a path escapes, ints, dates.
KEYS = {"cat": "STRING", "hr": "INT", "ds": "DATE"}
# Names a data source table's columns and partition columns may have that are not words (Hive 2.3 stores them
# as sent): written quoted. No filter can name such a key, so a SELECT whose WHERE names it fails on both.
ODD_COLUMNS = ("`a:b`", "`my col`", "`c,d`")
ODD_KEYS = {"`event day`": "`Event Day`", "`k:v`": "`K:v`"}  # name: its spelling in upper case
VALUES = {
    # a.b and axb: a partial specification Hive 2.3 matches as a pattern (`.` any character), which Spark
    # works around; the answers through Spark must agree.
    "cat": ("a b", "x/y", "k=v", "1:2", "50%", "ü日", "plain", "Z", "a.b", "axb"),
    "hr": ("1", "2", "3", "10", "-1"),
    "ds": ("2024-01-01", "2024-01-02", "2024-02-29", "2023-12-31"),
}
KEYS_OF_ANY_TABLE = sorted(KEYS)
KEYS.update(dict.fromkeys(ODD_KEYS, "STRING"))
VALUES.update(dict.fromkeys(ODD_KEYS, ("x y", "plain", "k=v")))
# Keys of other types, drawn now and then in place of one above: Spark prunes by integral ones only (the rest
# are read whole and filtered by Spark); a data source table's TIMESTAMP_NTZ key is one Hive has no type for
# (stored typed '<derived from deserializer>').
TYPED_KEYS = {"n": "BIGINT", "b": "BOOLEAN", "ts": "TIMESTAMP"}
SOURCE_TYPED_KEYS = {**TYPED_KEYS, "nt": "TIMESTAMP_NTZ"}
KEYS.update(SOURCE_TYPED_KEYS)
VALUES.update({"n": ("5", "-7", "9000000000"), "b": ("true", "false"),
               "ts": ("2024-01-01 10:00:00", "2024-03-01 00:00:00.5"),
               "nt": ("2024-01-01 10:00:00", "2023-12-31 23:59:59")})
BARE = ("INT", "BIGINT", "BOOLEAN")  # types whose values are written bare

Part = tuple[str, ...]


@dataclass
class Table:
    columns: list[str]
    keys: list[str]
    view: bool = False
    parts: set[Part] = field(default_factory=set)
    placed: set[Part] = field(default_factory=set)  # partitions outside their default directory
    source: str = ""  # a data source table's provider (USING ...); "" for a Hive table


@dataclass
class Model:
    """What the script has made so far, as far as the generator can tell."""

    databases: dict[str, dict[str, Table]] = field(default_factory=dict)
    functions: dict[str, set[str]] = field(default_factory=dict)  # permanent functions by database


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.model = Model()
        self.out: list[str] = ["SET hive.exec.dynamic.partition.mode=nonstrict"]
        self.counter = 0  # row ids and directory names, unique in the script
        self.overwrite = "static"  # spark.sql.sources.partitionOverwriteMode

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
        if KEYS[key] in BARE:
            return v
        if KEYS[key] in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ"):
            return f"{KEYS[key]}'{v}'"
        return f"'{v}'"

    def spec_item(self, key: str, v: str) -> str:
        return f"{key}={v}" if KEYS[key] in BARE else f"{key}='{v}'"

    def typed(self, keys: list[str], spelled: list[str], pool: dict[str, str]) -> tuple[list[str], list[str]]:
        """Now and then the last key replaced by one of another type from `pool`."""
        if keys and self.chance(0.12):
            key = self.rng.choice(sorted(set(pool) - set(keys)))
            return keys[:-1] + [key], spelled[:-1] + [key]
        return keys, spelled

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
        if t is not None and t.source:
            choices += [f"SHOW CREATE TABLE {full}"]
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
        if self.chance(0.75):
            self.emit(f"ALTER DATABASE {db} SET DBPROPERTIES ('tier'='{self.next() % 3}', 'note'='ä b')")
        else:
            self.emit(f"ALTER DATABASE {db} UNSET DBPROPERTIES ('tier', 'k{self.next() % 3}')")
        self.emit(f"DESCRIBE DATABASE EXTENDED {db}")

    def drop_database(self) -> None:
        db = self.pick_db()
        cascade = self.chance(0.6)
        if_exists = self.chance(0.3)
        self.emit(f"DROP DATABASE {'IF EXISTS ' if if_exists else ''}{db}{' CASCADE' if cascade else ''}")
        empty = not self.model.databases.get(db) and not self.model.functions.get(db)
        if db in self.model.databases and (cascade or empty):
            del self.model.databases[db]
            self.model.functions.pop(db, None)  # Hive drops a database's functions with it
        self.emit("SHOW DATABASES")

    def create_table(self) -> None:
        db = self.pick_db()
        name = self.fresh_name(db)
        keys = self.rng.sample(KEYS_OF_ANY_TABLE, self.rng.choice((0, 1, 1, 2, 2)))
        # Now and then declared in upper case: Spark keeps the case (its directories `Cat=x`), the
        # metastore's names are lower case.
        spelled = [k.capitalize() if self.chance(0.25) else k for k in keys]
        if name in self.model.databases.get(db, {}) and self.chance(0.5):  # made again, another way
            self.emit(f"DROP TABLE IF EXISTS {db}.{name}")
            del self.model.databases[db][name]
        if self.chance(0.35):
            return self.create_source_table(db, name, keys, spelled)
        keys, spelled = self.typed(keys, spelled, TYPED_KEYS)
        fmt = self.rng.choice(FORMATS)
        external = self.chance(0.3)
        parts = [f"CREATE {'EXTERNAL ' if external else ''}TABLE "]
        if self.chance(0.15):
            parts.append("IF NOT EXISTS ")
        parts.append(f"{db}.{name} (id INT COMMENT 'the id', v STRING)")
        if self.chance(0.4):
            parts.append(f" COMMENT 'table {name}'")
        if keys:
            parts.append(" PARTITIONED BY (" + ", ".join(f"{k} {KEYS[k.lower()]}" for k in spelled) + ")")
        if self.chance(0.15):  # a bucketed Hive table (Spark writes it, or refuses to, alike on both sides)
            sort = self.rng.choice(("", " SORTED BY (id)", " SORTED BY (id ASC, v)"))  # Spark refuses DESC
            parts.append(f" CLUSTERED BY (id){sort} INTO {self.rng.choice((2, 4))} BUCKETS")
        if fmt == "TEXTFILE" and self.chance(0.3):
            parts.append(" ROW FORMAT DELIMITED FIELDS TERMINATED BY ','")
        parts.append(f" STORED AS {fmt}")
        if external or self.chance(0.1):
            # Two directories a name: a table made again there finds the files (and partition
            # directories, for MSCK) an external one left.
            parts.append(f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'")
        if self.chance(0.4):
            parts.append(f" TBLPROPERTIES ('owner.team'='t{self.next() % 3}', 'note'='n ü')")
        self.emit("".join(parts))
        self.made(db, name, Table(["id", "v"], keys))

    def create_source_table(self, db: str, name: str, keys: list[str], spelled: list[str]) -> None:
        """CREATE TABLE ... USING a provider: its partition columns among its columns (Spark puts them
        last), with options, bucketing, a location (then external) and properties now and then."""
        provider = self.rng.choice(sorted(PROVIDERS))
        keys, spelled = self.typed(keys, spelled, SOURCE_TYPED_KEYS)
        data = ["id", "v"] + ([self.rng.choice(ODD_COLUMNS)] if self.chance(0.15) else [])
        if keys and len(keys) < 2 and self.chance(0.15):
            key = self.rng.choice(sorted(ODD_KEYS))
            keys, spelled = keys + [key], spelled + [ODD_KEYS[key] if self.chance(0.4) else key]
        columns = [f"{c} {'INT' if c == 'id' else 'STRING'}" + (" COMMENT 'the id'" if c == "id" else "") for c in data]
        columns += [f"{k} {KEYS[k.lower()]}" for k in spelled]
        if keys and self.chance(0.3):  # declared first: Spark moves them to the end
            columns = columns[len(data):] + columns[:len(data)]
        parts = [f"CREATE TABLE {'IF NOT EXISTS ' if self.chance(0.15) else ''}{db}.{name} ({', '.join(columns)})"
                 f" USING {provider}"]
        clauses = []
        options = [PROVIDERS[provider]] if self.chance(0.4) else []
        if keys:
            clauses.append(f" PARTITIONED BY ({', '.join(spelled)})")
        if self.chance(0.2):
            sort = self.rng.choice(("", " SORTED BY (id)"))
            clauses.append(f" CLUSTERED BY (id){sort} INTO {self.rng.choice((2, 4))} BUCKETS")
        if self.chance(0.25):  # external; now and then by the `path` option, as DataFrame writers give it
            where = f"{{warehouse}}/src/{name}_{self.rng.choice('ab')}"
            if self.chance(0.3):
                options.append(f"'path'='{where}'")
            else:
                clauses.append(f" LOCATION '{where}'")
        if options:
            clauses.append(f" OPTIONS ({', '.join(options)})")
        if self.chance(0.3):
            clauses.append(f" COMMENT 'table {name}'")
        if self.chance(0.3):
            clauses.append(f" TBLPROPERTIES ('owner.team'='t{self.next() % 3}', 'note'='n ü')")
        if self.chance(0.3):
            self.rng.shuffle(clauses)  # Spark takes them in any order
        self.emit("".join(parts + clauses))
        self.made(db, name, Table(data, keys, source=provider))

    def made(self, db: str, name: str, table: Table) -> None:
        """The model after a CREATE TABLE of `db.name`, then a read of it."""
        tables = self.model.databases.get(db)
        if tables is not None and name not in tables:
            tables[name] = table
        self.read(db, name, self.model.databases.get(db, {}).get(name))

    def create_table_as(self) -> None:
        src_db, src, t = self.pick_table()
        db = self.pick_db()
        name = self.fresh_name(db)
        columns = (t.columns + t.keys) if t else ["id", "v"]
        if self.chance(0.3):  # a data source table, partitioned by one of the source's keys now and then
            provider = self.rng.choice(sorted(PROVIDERS))
            key = self.rng.choice(t.keys) if t and t.keys and self.chance(0.6) else ""
            by = f" PARTITIONED BY ({key})" if key else ""
            self.emit(f"CREATE TABLE {db}.{name} USING {provider}{by} AS SELECT * FROM {src_db}.{src}")
            made = Table([c for c in columns if c != key], [key] if key else [], source=provider)
        elif self.chance(0.5) or t is None:
            fmt = self.rng.choice(FORMATS)
            # Partitioned by the source's last key now and then: a CTAS's partition columns end its query.
            key = t.keys[-1] if t and t.keys and self.chance(0.3) else ""
            by = f" PARTITIONED BY ({key})" if key else ""
            self.emit(f"CREATE TABLE {db}.{name}{by} STORED AS {fmt} AS SELECT * FROM {src_db}.{src}")
            made = Table([c for c in columns if c != key], [key] if key else [])
        else:
            location = f" LOCATION '{{warehouse}}/ext/{name}_{self.rng.choice('ab')}'" if self.chance(0.3) else ""
            self.emit(f"CREATE TABLE {db}.{name} LIKE {src_db}.{src}{location}")
            made = Table(list(t.columns), list(t.keys), source=t.source)
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
        verb = "ALTER VIEW" if kind == "alter" else self.rng.choice(("CREATE VIEW", "CREATE VIEW",
                                                                     "CREATE OR REPLACE VIEW"))
        props = " COMMENT 'a view' TBLPROPERTIES ('tier'='v')" if verb != "ALTER VIEW" and self.chance(0.2) else ""
        self.emit(f"{verb} {db}.{name}{props} AS SELECT {cols} FROM {src_db}.{src}{where}")
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
        if verb.startswith("INSERT OVERWRITE") and t.keys and self.chance(0.3):
            # Dynamic: an overwrite replaces the partitions it writes; static (the default): every
            # partition its static values match (a data source table's are then dropped, data kept).
            self.overwrite = self.rng.choice(("static", "dynamic"))
            self.emit(f"SET spark.sql.sources.partitionOverwriteMode={self.overwrite}")
        rows = [self.row(t) for _ in range(self.rng.choice((1, 2)))]
        if not t.keys:
            self.emit(f"{verb} {db}.{name} VALUES " + ", ".join(f"({', '.join(r)})" for r in rows))
        else:
            static = self.rng.choice(range(len(t.keys) + 1))  # how many leading keys are static
            part = self.new_part(t)
            spec = ", ".join(self.spec_item(k, v) if i < static else k for i, (k, v) in enumerate(zip(t.keys, part)))
            values = []
            written: set[Part] = set()
            for r in rows:
                dyn = [self.literal(k, self.value(k) if len(rows) > 1 and self.chance(0.5) else v)
                       for k, v in list(zip(t.keys, part))[static:]]
                if dyn and self.chance(0.08):  # the default partition (__HIVE_DEFAULT_PARTITION__)
                    dyn[-1] = "NULL"
                values.append(f"({', '.join(r + dyn)})")
                if "NULL" not in dyn:  # a spec cannot name the default partition's value: left out of the model
                    written.add(tuple(part[:static]) + tuple(re.sub(r"^[A-Z_]+'", "'", d).strip("'") for d in dyn))
            if verb.startswith("INSERT OVERWRITE") and t.source and self.overwrite == "static":
                t.parts = {p for p in t.parts if p[:static] != part[:static]}
            t.parts |= written
            if static == 0 and self.chance(0.3):  # no PARTITION clause: every key dynamic, last in each row
                self.emit(f"{verb} {db}.{name} VALUES " + ", ".join(values))
            else:
                # An overwrite of one whole partition only when it is not there yet, now and then; not of a
                # value with a '.', which Hive 2.3's lookup matches as a pattern (the module's docstring).
                unless = " IF NOT EXISTS" if verb.startswith("INSERT OVERWRITE") and static == len(t.keys) \
                    and not any("." in v for v in part) and self.chance(0.2) else ""
                self.emit(f"{verb} {db}.{name} PARTITION ({spec}){unless} VALUES " + ", ".join(values))
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
            purge = " PURGE" if self.chance(0.15) else ""
            self.emit(f"ALTER TABLE {db}.{name} DROP {if_exists}{', '.join(specs)}{purge}")
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
        what = self.rng.choice(("", " NOSCAN", " FOR COLUMNS id, v", " FOR COLUMNS id", " FOR ALL COLUMNS"))
        if spec and what.startswith(" FOR"):
            what = " FOR COLUMNS id"
        if self.chance(0.1):  # every table of the database (Spark 3.2's ANALYZE TABLES)
            self.emit(f"ANALYZE TABLES IN {db} COMPUTE STATISTICS{self.rng.choice(('', ' NOSCAN'))}")
        else:
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

    def function(self) -> None:
        """A permanent function: created (also again, or replaced), dropped, described, listed, called."""
        db = self.pick_db()
        known = self.model.functions.setdefault(db, set()) if db in self.model.databases else set()
        kind = self.rng.choice(("create", "create", "create", "drop", "describe", "call", "call", "show"))
        name = self.rng.choice(sorted(known) if known and self.chance(0.5 if kind == "create" else 0.85)
                               else FUNCTIONS)
        if self.chance(0.04):  # a name no function can have: not found, then refused by the create
            name = "`my-fn`"
        spelled = f"{db}.{name.upper() if self.chance(0.15) else name}"
        if kind == "create":
            udf = self.rng.choice((MISSING_UDF, "")) if self.chance(0.06) else self.rng.choice(UDFS)
            how = self.rng.choice(("", "", "OR REPLACE ", "IF NOT EXISTS "))
            if how == "IF NOT EXISTS ":
                self.emit(f"CREATE FUNCTION IF NOT EXISTS {spelled} AS '{udf}'")
            else:
                self.emit(f"CREATE {how}FUNCTION {spelled} AS '{udf}'")
            if db in self.model.databases and not name.startswith("`"):
                known.add(name)
            kind = self.rng.choice(("describe", "call", "show"))
        elif kind == "drop":
            self.emit(f"DROP FUNCTION {'IF EXISTS ' if self.chance(0.4) else ''}{spelled}")
            known.discard(name)
            kind = "show"
        if kind == "describe":
            self.emit(f"DESCRIBE FUNCTION {'EXTENDED ' if self.chance(0.6) else ''}{spelled}")
        elif kind == "call":
            tables = [(d, n, t) for d, n, t in self.tables() if not t.view]
            if tables and self.chance(0.7):
                d, n, t = self.rng.choice(tables)
                self.emit(f"SELECT id, {spelled}(v) FROM {d}.{n} ORDER BY id, 2")
            else:
                self.emit(f"SELECT {spelled}('MiXed ü')")
        else:
            like = f" LIKE '{self.rng.choice(PATTERNS)}'" if self.chance(0.3) else ""
            self.emit(f"SHOW USER FUNCTIONS IN {db}{like}")

    def tables(self) -> list[tuple[str, str, Table]]:
        return sorted(((db, name, t) for db, tables in self.model.databases.items() for name, t in tables.items()),
                      key=lambda k: (k[0], k[1]))

    def listing(self) -> None:
        """Names by a pattern the metastore matches (`*`, `|`, and a regular expression's characters)."""
        db = self.pick_db()
        pattern = self.rng.choice(PATTERNS)
        self.emit(self.rng.choice((f"SHOW TABLES IN {db} LIKE '{pattern}'", f"SHOW TABLES IN {db} LIKE '{pattern}'",
                                   f"SHOW TABLES FROM {db} '{pattern}'", f"SHOW VIEWS IN {db} LIKE '{pattern}'",
                                   f"SHOW TABLE EXTENDED IN {db} LIKE '{pattern}'",
                                   f"SHOW USER FUNCTIONS IN {db} LIKE '{pattern}'",
                                   f"SHOW DATABASES LIKE '{pattern}'")))

    def drop_table(self) -> None:
        db, name, t = self.pick_table(existing=0.7)
        purge = " PURGE" if self.chance(0.15) else ""  # Hive's ifPurge: no trash
        self.emit(f"DROP TABLE {'IF EXISTS ' if self.chance(0.3) else ''}{db}.{name}{purge}")
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
                   (self.analyze, 2), (self.repair, 1), (self.drop_table, 2), (self.function, 2),
                   (self.listing, 1)]
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
