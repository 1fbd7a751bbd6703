select
    id as order_id,
    customer_id,
    status,
    amount_cents,
    ordered_at
from {{ source('raw', 'orders') }}
