{# A team's models live in the team's schema (sales.fct_orders), not target_schema_sales. #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name is not none else target.schema }}
{%- endmacro %}
