-- Finance's revenue rows each match one of sales' orders, in the same currency.
{{ config(meta={'owner_team': 'exec'}) }}
select r.order_id
from {{ ref('fct_revenue') }} as r
left join {{ ref('fct_orders') }} as o on o.order_id = r.order_id
where o.order_id is null or o.currency <> r.currency
