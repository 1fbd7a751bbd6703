-- The registry's two database roles (docs/operations.md, "Database roles").
-- registry_owner owns the tables and runs `migrate`; registry_app serves and, once
-- `migrate` ran with DATABASE_SERVING_ROLE=registry_app, may only SELECT and INSERT
-- on the audit log: it cannot disable its triggers, since it owns nothing.
-- Change both passwords (and the DATABASE_URLs in compose.yaml) outside a demo.
CREATE ROLE registry_owner LOGIN PASSWORD 'registry-owner';
CREATE ROLE registry_app LOGIN PASSWORD 'registry-app';
CREATE DATABASE registry OWNER registry_owner;
