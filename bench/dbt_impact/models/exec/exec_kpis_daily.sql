with sales as (
    select * from {{ ref('sales_daily') }}
),

signups as (
    select signup_date, count(*) as new_customers
    from {{ ref('customers_public') }}
    group by signup_date
),

tickets as (
    select cast(opened_at as date) as day, count(*) as tickets_opened
    from {{ ref('stg_tickets') }}
    group by cast(opened_at as date)
)

select
    s.order_date as day,
    s.orders,
    s.revenue_usd,
    coalesce(n.new_customers, 0) as new_customers,
    coalesce(t.tickets_opened, 0) as tickets_opened
from sales as s
left join signups as n on n.signup_date = s.order_date
left join tickets as t on t.day = s.order_date
