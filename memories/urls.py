from django.urls import path

from memories.views import conversations, divergences, entities, graph, reading, team

app_name = "dashboard"

urlpatterns = [
    path("", reading.home, name="home"),
    path("w/<slug:slug>/", reading.overview, name="overview"),
    path("w/<slug:slug>/search", reading.search, name="search"),
    path("w/<slug:slug>/memories", reading.memories_page, name="memories"),
    path("w/<slug:slug>/m/<str:mem_id>", reading.memory_page, name="memory"),
    path("w/<slug:slug>/m/<str:mem_id>/feedback", reading.feedback, name="feedback"),
    path("w/<slug:slug>/entities", entities.entities, name="entities"),
    path("w/<slug:slug>/e/<str:entity_id>", entities.entity_page, name="entity"),
    path("w/<slug:slug>/s/<path:session>", conversations.conversation_page, name="conversation"),
    path("w/<slug:slug>/graph", graph.graph_page, name="graph"),
    path("w/<slug:slug>/graph/data", graph.graph_data, name="graph-data"),
    path("w/<slug:slug>/graph/path", graph.graph_path, name="graph-path"),
    path("w/<slug:slug>/divergences", divergences.divergences, name="divergences"),
    path("w/<slug:slug>/sources", reading.sources, name="sources"),
    path("w/<slug:slug>/sources/<str:kind>/<path:key>", reading.source_page, name="source"),
    path("w/<slug:slug>/compiled", reading.compiled, name="compiled"),
    path("w/<slug:slug>/agents", team.agents, name="agents"),
    path("w/<slug:slug>/members", team.members, name="members"),
    path("w/<slug:slug>/erase", team.erase, name="erase"),
]
