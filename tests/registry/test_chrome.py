"""The chrome every page shares: the product's name in the title and the brand, a
favicon, a navigation that folds into a menu, and a login page that names the demo's
users in the demo."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

from registry.demo import load_core_demo

pytestmark = pytest.mark.django_db


def _title(page: str) -> str:
    return re.search(r"<title>(.*?)</title>", page, re.S).group(1)


def _brand(page: str) -> str:
    return re.search(r'<a class="brand"[^>]*>(?:<img[^>]*>)?([^<]+)</a>', page).group(1)


def test_the_title_and_the_brand_name_the_product_not_the_host(client, owner):
    # Django's login view puts the host name in its context as `site_name`.
    login = client.get("/login/").content.decode()
    assert _title(login) == "Log in · Dataset registry" and _brand(login) == "Dataset registry"
    client.force_login(owner)
    listed = client.get("/").content.decode()
    assert _title(listed) == "Datasets · Dataset registry" and _brand(listed) == "Dataset registry"
    assert _title(client.get("/contracts/").content.decode()) == "Contracts · Dataset registry"


def test_in_the_demo_the_login_page_names_the_demo_users_and_their_password(client, settings):
    settings.DEBUG = True  # the embedded demo (make demo) runs with DEBUG on
    load_core_demo()
    page = client.get("/login/").content.decode()
    demo = page[page.index('id="demo-logins"'):]
    assert "Every demo user's password is <code>demo-password</code>" in demo
    assert re.findall(r"<li><code>(\w+)</code>", demo) == ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]
    assert "Alice Archer · Checkout" in demo and "Carol Chen · Analytics, Finance" in demo
    assert "Gina Garcia · governance admin" in demo


def test_outside_the_demo_the_login_page_names_no_one(client, settings):
    load_core_demo()
    settings.DEBUG = False
    assert "demo-password" not in client.get("/login/").content.decode()



def test_without_the_demo_loaded_the_login_page_names_no_one(client, settings):
    settings.DEBUG = True
    page = client.get("/login/").content.decode()
    assert 'id="demo-logins"' not in page and "demo-password" not in page


def test_every_page_links_the_favicon_and_favicon_ico_answers(client):
    page = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    svg = open(finders.find("favicon.svg")).read()
    assert svg.startswith("<svg") and "<script" not in svg


def test_the_navigation_has_a_menu_button_for_narrow_screens(client, owner):
    client.force_login(owner)
    page = client.get("/").content.decode()
    assert ('<button type="button" class="nav-toggle secondary" aria-expanded="false" aria-controls="site-nav">'
            "Menu</button>") in page
    assert '<nav id="site-nav" aria-label="Main">' in page
    assert '<script src="/static/js/menu.js" defer></script>' in page


def test_every_page_starts_with_a_skip_link_to_the_main_content(client, owner):
    client.force_login(owner)
    page = client.get("/").content.decode()
    body = page[page.index("<body>"):]
    first_link = body[body.index("<a "):body.index("</a>")]
    assert 'class="skip-link"' in first_link and 'href="#content"' in first_link
    assert '<main id="content"' in page
