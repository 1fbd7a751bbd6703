-- Finance reconciles what was charged against the raw order and payment tables.
with orders as (
    select id, currency, status from {{ source('raw', 'orders') }}
),

payments as (
    select order_id, amount_cents from {{ source('raw', 'payments') }}
    where status = 'success'
)

select
    o.currency,
    count(distinct o.id) as orders,
    coalesce(sum(p.amount_cents), 0) as collected_cents
from orders as o
left join payments as p on p.order_id = o.id
where o.status <> 'cancelled'
group by o.currency
