from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from memories.api import views

urlpatterns = [
    path("memories", views.MemoryCreateApi.as_view(), name="memory-create"),
    path("memories/bulk", views.MemoryBulkApi.as_view(), name="memory-bulk"),
    path("memories/erase", views.EraseChosenApi.as_view(), name="memory-erase-chosen"),
    path("messages", views.MessagesApi.as_view(), name="messages"),
    path("memories/<str:mem_id>", views.MemoryDetailApi.as_view(), name="memory-detail"),
    path(
        "memories/<str:mem_id>/feedback", views.MemoryFeedbackApi.as_view(), name="memory-feedback"
    ),
    path("memories/<str:mem_id>/forget", views.MemoryForgetApi.as_view(), name="memory-forget"),
    path("memories/<str:mem_id>/erase", views.MemoryEraseApi.as_view(), name="memory-erase"),
    path("memories/<str:mem_id>/links", views.MemoryLinksApi.as_view(), name="memory-links"),
    path(
        "memories/<str:mem_id>/links/<str:link_id>/remove",
        views.MemoryLinkRemoveApi.as_view(),
        name="memory-link-remove",
    ),
    path("entities", views.EntitiesApi.as_view(), name="entities"),
    path("entities/<str:entity_id>", views.EntityDetailApi.as_view(), name="entity-detail"),
    path("sources", views.SourcesApi.as_view(), name="sources"),
    path("sources/<str:kind>/<path:key>", views.SourceDetailApi.as_view(), name="source-detail"),
    path("search", views.SearchApi.as_view(), name="search"),
    path("traverse", views.TraverseApi.as_view(), name="traverse"),
    path("explain-path", views.ExplainPathApi.as_view(), name="explain-path"),
    path("divergences", views.DivergencesApi.as_view(), name="divergences"),
    path(
        "divergences/<str:divergence_id>",
        views.DivergenceDetailApi.as_view(),
        name="divergence-detail",
    ),
    path("compiled", views.CompiledFileApi.as_view(), name="compiled"),
    path(
        "schema/",
        SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
        name="schema",
    ),
    path(
        "schema/swagger/",
        SpectacularSwaggerView.as_view(
            url_name="schema", permission_classes=[], authentication_classes=[]
        ),
        name="swagger",
    ),
    path(
        "schema/redoc/",
        SpectacularRedocView.as_view(
            url_name="schema", permission_classes=[], authentication_classes=[]
        ),
        name="redoc",
    ),
]
