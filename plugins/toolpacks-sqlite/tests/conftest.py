"""Fixtures: a small shop database and a second, unrelated database."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from toolpacks import Tool

from toolpacks_sqlite import SQLiteTools

SHOP = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email TEXT UNIQUE
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers(id),
    total REAL DEFAULT 0,
    receipt BLOB
);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
CREATE TABLE [odd "name"] (x);
INSERT INTO customers (name, email) VALUES ('Ada', 'ada@example.com'), ('Bob', NULL);
INSERT INTO orders VALUES (1, 1, 50, x'00ff'), (2, 1, 150, NULL), (3, 2, 300, NULL);
"""


def make_database(path: Path, script: str) -> Path:
    """Create a database file from a SQL script."""
    with closing(sqlite3.connect(path)) as connection:
        connection.executescript(script)
        connection.commit()
    return path


@pytest.fixture
def new_database() -> Callable[[Path, str], Path]:
    """A function creating a database file from a SQL script."""
    return make_database


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop database file."""
    directory = tmp_path / "data"
    directory.mkdir()
    return make_database(directory / "shop.db", SHOP)


@pytest.fixture
def tools(shop: Path) -> dict[str, Tool]:
    """The tools of ``SQLiteTools`` on the shop database, by name (at most 5 rows a query)."""
    return {t.name: t for t in SQLiteTools(shop, max_rows=5).tools()}
