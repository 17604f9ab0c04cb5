from django.urls import path

from consolidation import dashboard, views

app_name = "consolidation"

urlpatterns = [
    path("api/v1/consolidate", views.ConsolidateApi.as_view(), name="consolidate"),
    path("api/v1/consolidate/<str:run_id>", views.RunApi.as_view(), name="run"),
    path("api/v1/saga", views.SagaApi.as_view(), name="saga"),
    path("api/v1/compiled/kept", views.KeptCompiledFileApi.as_view(), name="compiled-kept"),
    path("w/<slug:slug>/consolidation", dashboard.runs, name="runs"),
    path("w/<slug:slug>/consolidation/merges", dashboard.merges, name="merges"),
    path("w/<slug:slug>/consolidation/proposals", dashboard.proposals, name="proposals"),
    path("w/<slug:slug>/threads", dashboard.threads, name="threads"),
    path("w/<slug:slug>/threads/<str:thread_id>", dashboard.thread_page, name="thread"),
]
