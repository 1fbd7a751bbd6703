with sessions as (
    select customer_id, device from {{ source('raw', 'sessions') }}
    where customer_id is not null
)

select
    customer_id,
    count(distinct device) as devices,
    count(*) as sessions
from sessions
group by customer_id
