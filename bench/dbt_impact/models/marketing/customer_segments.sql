with customers as (
    select * from {{ ref('customers_public') }}
),

orders as (
    select * from {{ ref('customer_orders') }}
)

select
    c.customer_id,
    c.segment,
    c.region,
    c.marketing_opt_in,
    coalesce(o.order_count, 0) as order_count,
    coalesce(o.lifetime_usd, 0) as lifetime_usd,
    case
        when coalesce(o.lifetime_usd, 0) >= 1000 then 'high'
        when coalesce(o.lifetime_usd, 0) >= 200 then 'medium'
        else 'low'
    end as value_tier
from customers as c
left join orders as o on o.customer_id = c.customer_id
