"""Search by meaning in PostgreSQL with pgvector: the vector index as a table per collection and
model (`vector(dimensions)` rows with an HNSW index over cosine distance), in the database
that settings.VECTOR_DATABASE names, written by the same one writer as the usearch index
(`index`, `rebuild`) and searched by every web process with `ORDER BY embedding <=> query`.

The vectors' source of truth stays where the collection keeps them (papers.PaperEmbedding):
this table is an index of them, made again from it by `rebuild`. The backend creates what it
needs itself (CREATE EXTENSION / TABLE / INDEX IF NOT EXISTS), so no migration runs on the
vectors' database, which may be another server than the site's.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction

from ..embeddings import TextEncoder
from .base import Collection
from .vectors import ExactVectorBackend, VectorBackend, VectorSource, _slug

logger = logging.getLogger(__name__)

# The HNSW graph's settings: pgvector's defaults are m=16, ef_construction=64; 128 (as the
# usearch index's expansion_add) builds a better graph for about twice the build time.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
# hnsw.ef_search, per query: at least this, and at least the number of ids asked for, since an
# HNSW scan returns at most ef_search rows. pgvector caps ef_search at 1,000: a query asking
# for more (a deep page of a filtered search, up to vectors.POOL_MAX) is answered exactly by a
# scan of the table instead (before pgvector 0.8's iterative scans, the index cannot give
# more), which is linear in the table's size.
EF_SEARCH = 100
EF_SEARCH_MAX = 1_000
# Memory for building the graph (`rebuild`): past it pgvector builds on disk, many times
# slower. 384 float32 dimensions and the graph take about 1.8 kB a vector.
BUILD_MEMORY = "1GB"
# Rows sent per COPY (binary): ~15 MB at 384 dimensions.
COPY_ROWS = 10_000
VERSIONS_TABLE = "wovepaper_vector_versions"


def table_name(collection: str, model: str) -> str:
    """The table of `collection`'s vectors from `model`: readable, and within PostgreSQL's 63
    characters with its "_building_hnsw" index whatever the model's name (a digest tells two
    long names apart)."""
    digest = hashlib.sha1(model.encode()).hexdigest()[:10]
    readable = _slug(f"{collection}-{model}").replace("-", "_")[:28].rstrip("_")
    return f"vectors_{readable}_{digest}"


def _literal(vector: np.ndarray) -> str:
    """A vector as pgvector's text input, `[x,y,...]`."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_COPY_TRAILER = (-1).to_bytes(2, "big", signed=True)


def copy_rows(ids: Sequence[int], rows: np.ndarray) -> bytes:
    """(id, embedding) rows in COPY's binary format, made by numpy in one pass: per row the
    field count, the bigint, and pgvector's binary vector (int16 dimensions, int16 unused,
    float4 big-endian each)."""
    rows = np.asarray(rows, dtype=np.float32)
    dimensions = rows.shape[1]
    layout = np.dtype(
        [
            ("fields", ">i2"),
            ("id_length", ">i4"),
            ("id", ">i8"),
            ("vector_length", ">i4"),
            ("dimensions", ">i2"),
            ("unused", ">i2"),
            ("vector", ">f4", (dimensions,)),
        ]
    )
    packed = np.zeros(len(ids), dtype=layout)
    packed["fields"] = 2
    packed["id_length"] = 8
    packed["id"] = np.asarray(ids, dtype=np.int64)
    packed["vector_length"] = 4 + 4 * dimensions
    packed["dimensions"] = dimensions
    packed["vector"] = rows
    return _COPY_HEADER + packed.tobytes() + _COPY_TRAILER


# The extension is in the database, or the server has it and this role may create it (it is
# not a trusted extension: a superuser's). Else the writer would fail on every batch while
# searches fell back to exact ones.
AVAILABLE = """
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')
    OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')
        AND (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))
"""


def pgvector_available(alias: str) -> bool:
    """Whether the database `alias` is PostgreSQL with the pgvector extension installed, or
    available to a role that may install it (VECTOR_ENGINE=auto). Asked on a connection of its
    own, once per process by the registry, so no request's or test's count of queries
    includes it."""
    if connections[alias].vendor != "postgresql":
        return False
    probe = connections.create_connection(alias)
    try:
        with probe.cursor() as cursor:
            cursor.execute(AVAILABLE)
            return bool(cursor.fetchone()[0])
    finally:
        probe.close()


class PgvectorBackend(VectorBackend):
    """The nearest vectors by pgvector's HNSW index, in the table `table_name(collection,
    model)` of the database `alias`. Until the writer has made the table (a new deployment,
    a new model), searches compare every vector exactly, as the usearch backend does before
    its first file."""

    engine = "pgvector"

    def __init__(
        self,
        collection: Collection,
        source: VectorSource,
        *,
        alias: str = "default",
        encoder: TextEncoder | None = None,
    ) -> None:
        super().__init__(collection, source, encoder)
        self.alias = alias
        if connections[alias].vendor != "postgresql":
            raise ImproperlyConfigured(
                f"VECTOR_ENGINE=pgvector needs PostgreSQL; the database {alias!r} is "
                f"{connections[alias].vendor}"
            )
        self._fallback = ExactVectorBackend(collection, source, encoder)
        self._table_seen = False

    @property
    def table(self) -> str:
        return table_name(self.collection.name, self.encoder.name)

    def _cursor(self) -> Any:
        return connections[self.alias].cursor()

    def table_exists(self) -> bool:
        """Whether the writer has made the table; once seen, not asked again (a rebuild
        replaces it in one transaction, so it never goes missing for a reader)."""
        if not self._table_seen:
            with self._cursor() as cursor:
                cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [self.table])
                self._table_seen = bool(cursor.fetchone()[0])
        return self._table_seen

    # --- the readers' side ------------------------------------------------------------------

    def has_vectors(self) -> bool:
        # The source's answer (remembered in the cache when there are none): the table only
        # repeats it, and a search without the table is answered from the source exactly.
        return self._fallback.has_vectors()

    def version(self) -> str:
        if not self.table_exists():
            return self._fallback.version()
        with self._cursor() as cursor:
            cursor.execute(f"SELECT serial FROM {VERSIONS_TABLE} WHERE name = %s", [self.table])
            row = cursor.fetchone()
        return f"pgvector-{row[0] if row else 0}"

    def nearest(self, vector: np.ndarray, count: int) -> tuple[list[int], np.ndarray]:
        if count <= 0:
            return [], np.zeros(0, dtype=np.float32)
        if not self.table_exists():
            logger.warning("no vector table %s yet: searching exactly", self.table)
            return self._fallback.nearest(vector, count)
        if count <= EF_SEARCH_MAX:
            setting = f"hnsw.ef_search = {min(max(EF_SEARCH, count), EF_SEARCH_MAX)}"
        else:
            setting = "enable_indexscan = off"  # more than an HNSW scan returns: read it whole
        # One round trip: the statements of one simple query run in one transaction (in
        # autocommit, their own), so SET LOCAL holds for this search only. No parameters
        # (they would need the extended protocol, one statement a message): the vector's
        # text is made of our floats' reprs, the count is an int.
        with self._cursor() as cursor:
            cursor.execute(
                f"SET LOCAL {setting}; "
                f"SELECT id, embedding <=> '{_literal(vector)}'::vector AS distance "
                f"FROM {self.table} ORDER BY distance LIMIT {int(count)}"
            )
            cursor.nextset()
            found = cursor.fetchall()
        ids = [int(row[0]) for row in found]
        return ids, np.asarray([row[1] for row in found], dtype=np.float32)

    def built(self) -> bool:
        return self.table_exists()

    def held(self, ids: Sequence[int]) -> set[int]:
        if not ids or not self.table_exists():
            return set()
        with self._cursor() as cursor:
            cursor.execute(f"SELECT id FROM {self.table} WHERE id = ANY(%s)", [list(ids)])
            return {int(row[0]) for row in cursor.fetchall()}

    # --- the writer's side (one process: the `search` queue's worker, or a command) ----------

    def _create(self, cursor: Any, table: str) -> None:
        dimensions = int(self.encoder.dimensions)
        try:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as error:
            raise ImproperlyConfigured(
                f"the database {self.alias!r} cannot create the pgvector extension ({error}); "
                "a superuser can (CREATE EXTENSION vector), or set VECTOR_ENGINE=usearch"
            ) from error
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} "
            "(name text PRIMARY KEY, serial bigint NOT NULL)"
        )
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {table} "
            f"(id bigint PRIMARY KEY, embedding vector({dimensions}) NOT NULL)"
        )
        cursor.execute(f"COMMENT ON TABLE {table} IS %s", [self.encoder.name])

    def _create_index(self, cursor: Any, table: str) -> None:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} "
            f"USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        )

    def _bump(self, cursor: Any) -> None:
        cursor.execute(
            f"INSERT INTO {VERSIONS_TABLE} AS v (name, serial) VALUES (%s, 1) "
            "ON CONFLICT (name) DO UPDATE SET serial = v.serial + 1",
            [self.table],
        )

    @staticmethod
    def _copy(cursor: Any, table: str, ids: Sequence[int], rows: np.ndarray) -> None:
        for start in range(0, len(ids), COPY_ROWS):
            data = copy_rows(ids[start : start + COPY_ROWS], rows[start : start + COPY_ROWS])
            # psycopg 3's COPY, through Django's cursor wrapper.
            with cursor.copy(f"COPY {table} (id, embedding) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(data)

    def index(self, ids: Sequence[int]) -> int:
        """Make these ids' rows current (add, replace, or remove): one DELETE and one COPY in
        a transaction, which readers see whole once it commits."""
        if not ids:
            return 0
        found, rows = self.source.vectors(list(ids), self.encoder.name)
        with transaction.atomic(using=self.alias), self._cursor() as cursor:
            self._create(cursor, self.table)
            self._create_index(cursor, self.table)
            cursor.execute(f"DELETE FROM {self.table} WHERE id = ANY(%s)", [list(ids)])
            if found:
                self._copy(cursor, self.table, found, rows)
            self._bump(cursor)
        return len(found)

    def rebuild(self, *, progress: Callable[[int], None] | None = None) -> int:
        """A new table from every current vector of the source, its HNSW index built once
        after the rows are in (far faster than growing the graph row by row), then put in the
        old one's place in the same transaction: readers see the old table until it commits."""
        building = f"{self.table}_building"
        count = 0
        with transaction.atomic(using=self.alias), self._cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {building}")
            self._create(cursor, building)
            for ids, rows in self._batches():
                self._copy(cursor, building, ids, rows)
                count += len(ids)
                if progress:
                    progress(len(ids))
            cursor.execute("SELECT set_config('maintenance_work_mem', %s, true)", [BUILD_MEMORY])
            self._create_index(cursor, building)
            cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
            cursor.execute(f"ALTER TABLE {building} RENAME TO {self.table}")
            cursor.execute(f"ALTER INDEX {building}_hnsw RENAME TO {self.table}_hnsw")
            cursor.execute(f"ALTER INDEX {building}_pkey RENAME TO {self.table}_pkey")
            self._bump(cursor)
            cursor.execute("ANALYZE " + self.table)
        self._table_seen = True
        return count

    def _batches(self) -> Iterator[tuple[list[int], np.ndarray]]:
        yield from self.source.batches(COPY_ROWS, self.encoder.name)

    def close(self) -> None:
        self._table_seen = False
