from registry.models import Consumer, Dataset, Team


def test_dataset_list_shows_owner_and_consumer_count(logged_in, dataset, unowned_dataset):
    (row,) = logged_in.get("/api/datasets/").json()["results"]

    assert row["namespace"] == "postgres://retail-db:5432"
    assert row["owner_team"] == "checkout"
    assert row["owner"] == "alice"
    assert row["consumer_count"] == 1
    assert row["compatibility_mode"] == "BACKWARD"


def test_dataset_list_filters_by_owner_team_unowned_and_search(logged_in, dataset):
    Dataset.objects.create(namespace="s3://lake", name="raw/clickstream")

    def names(query):
        return [d["name"] for d in logged_in.get(f"/api/datasets/?{query}").json()["results"]]

    assert names("owner_team=checkout") == ["retail.public.orders"]
    assert names("unowned=true") == ["raw/clickstream"]
    assert names("search=click") == ["raw/clickstream"]
    assert names("owner_team=warehouse") == []


def test_listing_1000_datasets_takes_a_constant_number_of_queries(logged_in, owner_team, owner, consumer_team, django_assert_num_queries):
    datasets = Dataset.objects.bulk_create(
        Dataset(namespace="postgres://bulk", name=f"table_{i:04}", owner_team=owner_team if i % 2 else None,
                owner=owner if i % 2 else None)
        for i in range(1000)
    )
    Consumer.objects.bulk_create(Consumer(dataset=d, team=consumer_team) for d in datasets[1::2])

    # 1: the session, 2: the user, 3: the page of datasets joined with owner team and
    # owner, with the consumer count (no count of the list: a keyset page needs none).
    with django_assert_num_queries(3):
        response = logged_in.get("/api/datasets/?limit=1000")

    body = response.json()
    assert "count" not in body and body["next"] is None
    assert len(body["results"]) == 1000
    assert body["results"][1]["owner_team"] == "checkout"
    assert body["results"][1]["consumer_count"] == 1


def test_dataset_detail_lists_consumers(logged_in, dataset):
    body = logged_in.get(f"/api/datasets/{dataset.pk}/").json()
    assert [c["team"] for c in body["consumers"]] == ["analytics"]


def test_claim_over_the_api(client, unowned_dataset, owner_team, owner):
    client.force_login(owner)
    response = client.post(f"/api/datasets/{unowned_dataset.pk}/claim/", {"team": "checkout", "owner": "bob"},
                           content_type="application/json")
    assert response.status_code == 200
    assert response.json()["owner"] == "bob"


def test_claiming_an_owned_dataset_is_a_conflict_that_says_why(client, dataset, other_team, outsider):
    client.force_login(outsider)
    response = client.post(f"/api/datasets/{dataset.pk}/claim/", {"team": "warehouse", "owner": "dave"},
                           content_type="application/json")
    assert response.status_code == 409
    assert "already owned by team checkout" in response.json()["detail"]


def test_claiming_for_a_team_you_are_not_in_is_forbidden(client, unowned_dataset, owner_team, outsider):
    client.force_login(outsider)
    response = client.post(f"/api/datasets/{unowned_dataset.pk}/claim/", {"team": "checkout", "owner": "alice"},
                           content_type="application/json")
    assert response.status_code == 403
    assert "member of team checkout" in response.json()["detail"]


def test_registering_a_consumer_on_an_unowned_dataset_is_refused_with_a_clear_error(client, unowned_dataset, consumer_team, consumer):
    client.force_login(consumer)
    response = client.post(f"/api/datasets/{unowned_dataset.pk}/consumers/", {"team": "analytics"},
                           content_type="application/json")
    assert response.status_code == 409
    assert response.json()["code"] == "dataset_unowned"
    assert "must claim it" in response.json()["detail"]


def test_the_owner_team_registering_as_consumer_of_its_own_dataset_is_refused_saying_why(client, dataset, owner):
    client.force_login(owner)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "checkout"},
                           content_type="application/json")
    assert response.status_code == 409
    assert response.json()["code"] == "owner_cannot_consume"
    assert "Team checkout owns postgres://retail-db:5432/retail.public.orders" in response.json()["detail"]
    assert not dataset.consumers.filter(team__slug="checkout").exists()


def test_register_and_unregister_a_consumer_over_the_api(client, dataset, other_team, outsider):
    client.force_login(outsider)
    created = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "warehouse"}, content_type="application/json")
    assert created.status_code == 201
    assert created.json()["team"] == "warehouse"

    assert client.delete(f"/api/datasets/{dataset.pk}/consumers/warehouse/").status_code == 204
    assert client.delete(f"/api/datasets/{dataset.pk}/consumers/warehouse/").status_code == 404


def test_unknown_team_in_a_request_body_says_which_field(client, dataset, outsider):
    client.force_login(outsider)
    response = client.post(f"/api/datasets/{dataset.pk}/consumers/", {"team": "nope"}, content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid" and "team" in body["fields"]
    assert body["detail"].startswith("team: ")


def test_teams_are_listed(logged_in, owner_team, consumer_team):
    slugs = [t["slug"] for t in logged_in.get("/api/teams/").json()["results"]]
    assert slugs == ["analytics", "checkout"]
    assert Team.objects.count() == 2


def test_openapi_document_and_docs_are_served(logged_in):
    schema = logged_in.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    assert "/api/datasets/" in schema.json()["paths"]
    docs = logged_in.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_healthz_reports_the_database_reachable(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["database"] == "reachable"


def test_healthz_reports_an_unreachable_database(client, db, monkeypatch):
    from django.db.backends.utils import CursorWrapper

    def down(self, sql, params=None):
        raise RuntimeError('connection to server at "10.1.2.3", port 5432 failed: Connection refused')

    with monkeypatch.context() as patched:
        patched.setattr(CursorWrapper, "execute", down)
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unhealthy", "database": "unreachable"}  # no host, no port
