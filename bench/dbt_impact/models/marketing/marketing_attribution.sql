with sessions as (
    select * from {{ ref('int_sessions_attributed') }}
),

orders as (
    select order_id, net_usd from {{ ref('orders_public') }}
)

select
    s.channel_name,
    s.is_paid,
    count(*) as sessions,
    count(o.order_id) as conversions,
    coalesce(sum(o.net_usd), 0) as revenue_usd
from sessions as s
left join orders as o on o.order_id = s.converted_order_id
group by s.channel_name, s.is_paid
