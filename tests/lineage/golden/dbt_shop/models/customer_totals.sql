select
    o.customer_id,
    c.country,
    count(*) as orders,
    sum(o.amount_cents) as total_cents
from {{ ref('stg_orders') }} as o
inner join {{ source('raw', 'customers') }} as c on c.id = o.customer_id
group by 1, 2
