from django.urls import path

from memories import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("w/<slug:slug>/", views.overview, name="overview"),
    path("w/<slug:slug>/search", views.search, name="search"),
    path("w/<slug:slug>/memories", views.memories_page, name="memories"),
    path("w/<slug:slug>/m/<str:mem_id>", views.memory_page, name="memory"),
    path("w/<slug:slug>/m/<str:mem_id>/feedback", views.feedback, name="feedback"),
    path("w/<slug:slug>/entities", views.entities, name="entities"),
    path("w/<slug:slug>/e/<str:entity_id>", views.entity_page, name="entity"),
    path("w/<slug:slug>/divergences", views.divergences, name="divergences"),
    path("w/<slug:slug>/sources", views.sources, name="sources"),
    path("w/<slug:slug>/sources/<str:kind>/<path:key>", views.source_page, name="source"),
    path("w/<slug:slug>/compiled", views.compiled, name="compiled"),
    path("w/<slug:slug>/agents", views.agents, name="agents"),
    path("w/<slug:slug>/members", views.members, name="members"),
    path("w/<slug:slug>/erase", views.erase, name="erase"),
]
