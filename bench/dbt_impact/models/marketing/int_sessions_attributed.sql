with sessions as (
    select * from {{ ref('stg_sessions') }}
),

channels as (
    select * from {{ ref('channel_map') }}
)

select
    s.session_id,
    s.customer_id,
    s.started_at,
    s.device,
    s.utm_campaign,
    s.pageviews,
    s.converted_order_id,
    coalesce(c.channel_name, 'Unknown') as channel_name,
    coalesce(c.is_paid, false) as is_paid
from sessions as s
left join channels as c on c.utm_source = s.utm_source
