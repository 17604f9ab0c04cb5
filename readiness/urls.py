from django.urls import path

from readiness import views

app_name = "readiness"

urlpatterns = [
    path("api/v1/readiness", views.ReadinessApi.as_view(), name="api"),
    path("api/v1/readiness/history", views.ReadinessHistoryApi.as_view(), name="history"),
    path("w/<slug:slug>/readiness", views.page, name="page"),
]
