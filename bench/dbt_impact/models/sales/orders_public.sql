-- The order table other teams are told to read.
with orders as (
    select * from {{ ref('fct_orders') }}
)

select * from orders
