"""Rebuild the vector index with ef_construction 128 (was 64): see ``memories.models.HNSW_M``.

The new index is built concurrently beside the old one, which serves searches until it is
dropped; then the new one takes the old one's name. Per-workspace indexes built before keep
their parameters until ``index_workspaces`` rebuilds them.
"""

from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations
from pgvector.django import HnswIndex

from memories.concurrent_indexes import AddIndexConcurrentlyOnce


def hnsw(name: str, ef_construction: int) -> HnswIndex:
    return HnswIndex(
        name=name,
        fields=["embedding"],
        m=16,
        ef_construction=ef_construction,
        opclasses=["vector_cosine_ops"],
    )


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memories", "0003_search_vector_word_statistics")]

    operations = [
        AddIndexConcurrentlyOnce("memory", hnsw("memory_embedding_hnsw_new", 128)),
        RemoveIndexConcurrently("memory", "memory_embedding_hnsw"),
        migrations.RenameIndex(
            "memory", new_name="memory_embedding_hnsw", old_name="memory_embedding_hnsw_new"
        ),
    ]
