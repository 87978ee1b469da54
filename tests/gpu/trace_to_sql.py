#!/usr/bin/env python3
"""A recorded trace as text SQL that occ-report reads directly (the bundled examples/*.sql):

  trace_to_sql.py TRACE.db SCHEMA.sql > OUT.sql            (with the schema, for examples/)
  trace_to_sql.py TRACE.db > input.sql                     (rows only, for tests/golden/*/)

Rows are written table by table in rowid order as INSERTs naming their columns, so a later
schema that adds a column still loads them. Views and empty tables are left out.
"""
import sqlite3
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    out = sys.stdout
    if len(sys.argv) == 3:
        out.write("BEGIN;\n")
        out.write(open(sys.argv[2]).read().replace("BEGIN;\n", "").replace("COMMIT;\n", ""))
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    for table in tables:
        columns = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
        quoted = ",".join(f'"{c}"' for c in columns)
        select = ",".join(f'quote("{c}")' for c in columns)
        for row in con.execute(f'SELECT {select} FROM "{table}" ORDER BY rowid'):
            out.write(f'INSERT INTO "{table}"({quoted}) VALUES({",".join(row)});\n')
    if len(sys.argv) == 3:
        out.write("COMMIT;\n")


if __name__ == "__main__":
    main()
