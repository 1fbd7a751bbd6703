with customers as (
    select * from {{ ref('customers_public') }}
),

tickets as (
    select
        customer_id,
        count(*) as tickets,
        count(*) filter (where closed_at is null) as open_tickets,
        round(avg(csat_score), 2) as avg_csat
    from {{ ref('stg_tickets') }}
    group by customer_id
),

orders as (
    select customer_id, lifetime_usd from {{ ref('customer_orders') }}
)

select
    c.customer_id,
    c.full_name,
    c.segment,
    c.region,
    coalesce(t.tickets, 0) as tickets,
    coalesce(t.open_tickets, 0) as open_tickets,
    t.avg_csat,
    coalesce(o.lifetime_usd, 0) as lifetime_usd
from customers as c
left join tickets as t on t.customer_id = c.customer_id
left join orders as o on o.customer_id = c.customer_id
