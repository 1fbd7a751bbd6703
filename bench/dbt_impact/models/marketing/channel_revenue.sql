-- Revenue by channel: the channel is only the group key.
select
    min(o.channel_code) as channel_code,
    count(*) as orders,
    sum(o.net_usd) as revenue_usd
from {{ ref('fct_orders') }} as o
where o.order_status <> 'cancelled'
group by o.channel_code
