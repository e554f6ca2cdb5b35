-- The schema and rows this dump was made from (PostgreSQL 15, pg_dump -t 'dump_*'):
--   drop table if exists dump_orders, dump_items, dump_notes;
--   create table dump_items (id serial primary key, sku varchar(20) not null unique, name text, price numeric(10,2) default 0, in_stock boolean default true, added date, tags text[]);
--   create table dump_orders (id bigserial primary key, item_id int not null, qty int, placed timestamptz default now(), note text);
--   create index dump_orders_item on dump_orders (item_id);
--   create unique index dump_orders_item_placed on dump_orders (item_id, placed);
--   create table dump_notes (k int, body text, raw bytea);
--   insert into dump_items (sku, name, price, in_stock, added, tags) select 'SKU-' || g, case when g % 10 = 0 then null else 'item ' || g || E' with\ttab and \\ backslash and ''quote''' end, g * 1.25, g % 3 <> 0, date '2024-01-01' + g, case when g % 4 = 0 then array['a','b c', null] else null end from generate_series(1, 200) g;
--   insert into dump_orders (item_id, qty, placed, note) select g % 200 + 1, g % 7 + 1, timestamptz '2024-03-01 12:00:00+00' + g * interval '1 minute', case when g % 5 = 0 then E'multi\nline' else null end from generate_series(1, 800) g;
--   insert into dump_notes select g, repeat('x', g), decode(md5(g::text), 'hex') from generate_series(1, 30) g;
--   alter table dump_orders add constraint dump_orders_item_fk foreign key (item_id) references dump_items (id) on delete restrict;
--   select setval('dump_items_id_seq', 250);
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: dump_items; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.dump_items (
    id integer NOT NULL,
    sku character varying(20) NOT NULL,
    name text,
    price numeric(10,2) DEFAULT 0,
    in_stock boolean DEFAULT true,
    added date,
    tags text[]
);


ALTER TABLE public.dump_items OWNER TO postgres;

--
-- Name: dump_items_id_seq; Type: SEQUENCE; Schema: public; Owner: postgres
--

CREATE SEQUENCE public.dump_items_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE public.dump_items_id_seq OWNER TO postgres;

--
-- Name: dump_items_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: postgres
--

ALTER SEQUENCE public.dump_items_id_seq OWNED BY public.dump_items.id;


--
-- Name: dump_notes; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.dump_notes (
    k integer,
    body text,
    raw bytea
);


ALTER TABLE public.dump_notes OWNER TO postgres;

--
-- Name: dump_orders; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.dump_orders (
    id bigint NOT NULL,
    item_id integer NOT NULL,
    qty integer,
    placed timestamp with time zone DEFAULT now(),
    note text
);


ALTER TABLE public.dump_orders OWNER TO postgres;

--
-- Name: dump_orders_id_seq; Type: SEQUENCE; Schema: public; Owner: postgres
--

CREATE SEQUENCE public.dump_orders_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE public.dump_orders_id_seq OWNER TO postgres;

--
-- Name: dump_orders_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: postgres
--

ALTER SEQUENCE public.dump_orders_id_seq OWNED BY public.dump_orders.id;


--
-- Name: dump_items id; Type: DEFAULT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_items ALTER COLUMN id SET DEFAULT nextval('public.dump_items_id_seq'::regclass);


--
-- Name: dump_orders id; Type: DEFAULT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_orders ALTER COLUMN id SET DEFAULT nextval('public.dump_orders_id_seq'::regclass);


--
-- Data for Name: dump_items; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.dump_items (id, sku, name, price, in_stock, added, tags) FROM stdin;
1	SKU-1	item 1 with\ttab and \\ backslash and 'quote'	1.25	t	2024-01-02	\N
2	SKU-2	item 2 with\ttab and \\ backslash and 'quote'	2.50	t	2024-01-03	\N
3	SKU-3	item 3 with\ttab and \\ backslash and 'quote'	3.75	f	2024-01-04	\N
4	SKU-4	item 4 with\ttab and \\ backslash and 'quote'	5.00	t	2024-01-05	{a,"b c",NULL}
5	SKU-5	item 5 with\ttab and \\ backslash and 'quote'	6.25	t	2024-01-06	\N
6	SKU-6	item 6 with\ttab and \\ backslash and 'quote'	7.50	f	2024-01-07	\N
7	SKU-7	item 7 with\ttab and \\ backslash and 'quote'	8.75	t	2024-01-08	\N
8	SKU-8	item 8 with\ttab and \\ backslash and 'quote'	10.00	t	2024-01-09	{a,"b c",NULL}
9	SKU-9	item 9 with\ttab and \\ backslash and 'quote'	11.25	f	2024-01-10	\N
10	SKU-10	\N	12.50	t	2024-01-11	\N
11	SKU-11	item 11 with\ttab and \\ backslash and 'quote'	13.75	t	2024-01-12	\N
12	SKU-12	item 12 with\ttab and \\ backslash and 'quote'	15.00	f	2024-01-13	{a,"b c",NULL}
13	SKU-13	item 13 with\ttab and \\ backslash and 'quote'	16.25	t	2024-01-14	\N
14	SKU-14	item 14 with\ttab and \\ backslash and 'quote'	17.50	t	2024-01-15	\N
15	SKU-15	item 15 with\ttab and \\ backslash and 'quote'	18.75	f	2024-01-16	\N
16	SKU-16	item 16 with\ttab and \\ backslash and 'quote'	20.00	t	2024-01-17	{a,"b c",NULL}
17	SKU-17	item 17 with\ttab and \\ backslash and 'quote'	21.25	t	2024-01-18	\N
18	SKU-18	item 18 with\ttab and \\ backslash and 'quote'	22.50	f	2024-01-19	\N
19	SKU-19	item 19 with\ttab and \\ backslash and 'quote'	23.75	t	2024-01-20	\N
20	SKU-20	\N	25.00	t	2024-01-21	{a,"b c",NULL}
21	SKU-21	item 21 with\ttab and \\ backslash and 'quote'	26.25	f	2024-01-22	\N
22	SKU-22	item 22 with\ttab and \\ backslash and 'quote'	27.50	t	2024-01-23	\N
23	SKU-23	item 23 with\ttab and \\ backslash and 'quote'	28.75	t	2024-01-24	\N
24	SKU-24	item 24 with\ttab and \\ backslash and 'quote'	30.00	f	2024-01-25	{a,"b c",NULL}
25	SKU-25	item 25 with\ttab and \\ backslash and 'quote'	31.25	t	2024-01-26	\N
26	SKU-26	item 26 with\ttab and \\ backslash and 'quote'	32.50	t	2024-01-27	\N
27	SKU-27	item 27 with\ttab and \\ backslash and 'quote'	33.75	f	2024-01-28	\N
28	SKU-28	item 28 with\ttab and \\ backslash and 'quote'	35.00	t	2024-01-29	{a,"b c",NULL}
29	SKU-29	item 29 with\ttab and \\ backslash and 'quote'	36.25	t	2024-01-30	\N
30	SKU-30	\N	37.50	f	2024-01-31	\N
31	SKU-31	item 31 with\ttab and \\ backslash and 'quote'	38.75	t	2024-02-01	\N
32	SKU-32	item 32 with\ttab and \\ backslash and 'quote'	40.00	t	2024-02-02	{a,"b c",NULL}
33	SKU-33	item 33 with\ttab and \\ backslash and 'quote'	41.25	f	2024-02-03	\N
34	SKU-34	item 34 with\ttab and \\ backslash and 'quote'	42.50	t	2024-02-04	\N
35	SKU-35	item 35 with\ttab and \\ backslash and 'quote'	43.75	t	2024-02-05	\N
36	SKU-36	item 36 with\ttab and \\ backslash and 'quote'	45.00	f	2024-02-06	{a,"b c",NULL}
37	SKU-37	item 37 with\ttab and \\ backslash and 'quote'	46.25	t	2024-02-07	\N
38	SKU-38	item 38 with\ttab and \\ backslash and 'quote'	47.50	t	2024-02-08	\N
39	SKU-39	item 39 with\ttab and \\ backslash and 'quote'	48.75	f	2024-02-09	\N
40	SKU-40	\N	50.00	t	2024-02-10	{a,"b c",NULL}
41	SKU-41	item 41 with\ttab and \\ backslash and 'quote'	51.25	t	2024-02-11	\N
42	SKU-42	item 42 with\ttab and \\ backslash and 'quote'	52.50	f	2024-02-12	\N
43	SKU-43	item 43 with\ttab and \\ backslash and 'quote'	53.75	t	2024-02-13	\N
44	SKU-44	item 44 with\ttab and \\ backslash and 'quote'	55.00	t	2024-02-14	{a,"b c",NULL}
45	SKU-45	item 45 with\ttab and \\ backslash and 'quote'	56.25	f	2024-02-15	\N
46	SKU-46	item 46 with\ttab and \\ backslash and 'quote'	57.50	t	2024-02-16	\N
47	SKU-47	item 47 with\ttab and \\ backslash and 'quote'	58.75	t	2024-02-17	\N
48	SKU-48	item 48 with\ttab and \\ backslash and 'quote'	60.00	f	2024-02-18	{a,"b c",NULL}
49	SKU-49	item 49 with\ttab and \\ backslash and 'quote'	61.25	t	2024-02-19	\N
50	SKU-50	\N	62.50	t	2024-02-20	\N
51	SKU-51	item 51 with\ttab and \\ backslash and 'quote'	63.75	f	2024-02-21	\N
52	SKU-52	item 52 with\ttab and \\ backslash and 'quote'	65.00	t	2024-02-22	{a,"b c",NULL}
53	SKU-53	item 53 with\ttab and \\ backslash and 'quote'	66.25	t	2024-02-23	\N
54	SKU-54	item 54 with\ttab and \\ backslash and 'quote'	67.50	f	2024-02-24	\N
55	SKU-55	item 55 with\ttab and \\ backslash and 'quote'	68.75	t	2024-02-25	\N
56	SKU-56	item 56 with\ttab and \\ backslash and 'quote'	70.00	t	2024-02-26	{a,"b c",NULL}
57	SKU-57	item 57 with\ttab and \\ backslash and 'quote'	71.25	f	2024-02-27	\N
58	SKU-58	item 58 with\ttab and \\ backslash and 'quote'	72.50	t	2024-02-28	\N
59	SKU-59	item 59 with\ttab and \\ backslash and 'quote'	73.75	t	2024-02-29	\N
60	SKU-60	\N	75.00	f	2024-03-01	{a,"b c",NULL}
61	SKU-61	item 61 with\ttab and \\ backslash and 'quote'	76.25	t	2024-03-02	\N
62	SKU-62	item 62 with\ttab and \\ backslash and 'quote'	77.50	t	2024-03-03	\N
63	SKU-63	item 63 with\ttab and \\ backslash and 'quote'	78.75	f	2024-03-04	\N
64	SKU-64	item 64 with\ttab and \\ backslash and 'quote'	80.00	t	2024-03-05	{a,"b c",NULL}
65	SKU-65	item 65 with\ttab and \\ backslash and 'quote'	81.25	t	2024-03-06	\N
66	SKU-66	item 66 with\ttab and \\ backslash and 'quote'	82.50	f	2024-03-07	\N
67	SKU-67	item 67 with\ttab and \\ backslash and 'quote'	83.75	t	2024-03-08	\N
68	SKU-68	item 68 with\ttab and \\ backslash and 'quote'	85.00	t	2024-03-09	{a,"b c",NULL}
69	SKU-69	item 69 with\ttab and \\ backslash and 'quote'	86.25	f	2024-03-10	\N
70	SKU-70	\N	87.50	t	2024-03-11	\N
71	SKU-71	item 71 with\ttab and \\ backslash and 'quote'	88.75	t	2024-03-12	\N
72	SKU-72	item 72 with\ttab and \\ backslash and 'quote'	90.00	f	2024-03-13	{a,"b c",NULL}
73	SKU-73	item 73 with\ttab and \\ backslash and 'quote'	91.25	t	2024-03-14	\N
74	SKU-74	item 74 with\ttab and \\ backslash and 'quote'	92.50	t	2024-03-15	\N
75	SKU-75	item 75 with\ttab and \\ backslash and 'quote'	93.75	f	2024-03-16	\N
76	SKU-76	item 76 with\ttab and \\ backslash and 'quote'	95.00	t	2024-03-17	{a,"b c",NULL}
77	SKU-77	item 77 with\ttab and \\ backslash and 'quote'	96.25	t	2024-03-18	\N
78	SKU-78	item 78 with\ttab and \\ backslash and 'quote'	97.50	f	2024-03-19	\N
79	SKU-79	item 79 with\ttab and \\ backslash and 'quote'	98.75	t	2024-03-20	\N
80	SKU-80	\N	100.00	t	2024-03-21	{a,"b c",NULL}
81	SKU-81	item 81 with\ttab and \\ backslash and 'quote'	101.25	f	2024-03-22	\N
82	SKU-82	item 82 with\ttab and \\ backslash and 'quote'	102.50	t	2024-03-23	\N
83	SKU-83	item 83 with\ttab and \\ backslash and 'quote'	103.75	t	2024-03-24	\N
84	SKU-84	item 84 with\ttab and \\ backslash and 'quote'	105.00	f	2024-03-25	{a,"b c",NULL}
85	SKU-85	item 85 with\ttab and \\ backslash and 'quote'	106.25	t	2024-03-26	\N
86	SKU-86	item 86 with\ttab and \\ backslash and 'quote'	107.50	t	2024-03-27	\N
87	SKU-87	item 87 with\ttab and \\ backslash and 'quote'	108.75	f	2024-03-28	\N
88	SKU-88	item 88 with\ttab and \\ backslash and 'quote'	110.00	t	2024-03-29	{a,"b c",NULL}
89	SKU-89	item 89 with\ttab and \\ backslash and 'quote'	111.25	t	2024-03-30	\N
90	SKU-90	\N	112.50	f	2024-03-31	\N
91	SKU-91	item 91 with\ttab and \\ backslash and 'quote'	113.75	t	2024-04-01	\N
92	SKU-92	item 92 with\ttab and \\ backslash and 'quote'	115.00	t	2024-04-02	{a,"b c",NULL}
93	SKU-93	item 93 with\ttab and \\ backslash and 'quote'	116.25	f	2024-04-03	\N
94	SKU-94	item 94 with\ttab and \\ backslash and 'quote'	117.50	t	2024-04-04	\N
95	SKU-95	item 95 with\ttab and \\ backslash and 'quote'	118.75	t	2024-04-05	\N
96	SKU-96	item 96 with\ttab and \\ backslash and 'quote'	120.00	f	2024-04-06	{a,"b c",NULL}
97	SKU-97	item 97 with\ttab and \\ backslash and 'quote'	121.25	t	2024-04-07	\N
98	SKU-98	item 98 with\ttab and \\ backslash and 'quote'	122.50	t	2024-04-08	\N
99	SKU-99	item 99 with\ttab and \\ backslash and 'quote'	123.75	f	2024-04-09	\N
100	SKU-100	\N	125.00	t	2024-04-10	{a,"b c",NULL}
101	SKU-101	item 101 with\ttab and \\ backslash and 'quote'	126.25	t	2024-04-11	\N
102	SKU-102	item 102 with\ttab and \\ backslash and 'quote'	127.50	f	2024-04-12	\N
103	SKU-103	item 103 with\ttab and \\ backslash and 'quote'	128.75	t	2024-04-13	\N
104	SKU-104	item 104 with\ttab and \\ backslash and 'quote'	130.00	t	2024-04-14	{a,"b c",NULL}
105	SKU-105	item 105 with\ttab and \\ backslash and 'quote'	131.25	f	2024-04-15	\N
106	SKU-106	item 106 with\ttab and \\ backslash and 'quote'	132.50	t	2024-04-16	\N
107	SKU-107	item 107 with\ttab and \\ backslash and 'quote'	133.75	t	2024-04-17	\N
108	SKU-108	item 108 with\ttab and \\ backslash and 'quote'	135.00	f	2024-04-18	{a,"b c",NULL}
109	SKU-109	item 109 with\ttab and \\ backslash and 'quote'	136.25	t	2024-04-19	\N
110	SKU-110	\N	137.50	t	2024-04-20	\N
111	SKU-111	item 111 with\ttab and \\ backslash and 'quote'	138.75	f	2024-04-21	\N
112	SKU-112	item 112 with\ttab and \\ backslash and 'quote'	140.00	t	2024-04-22	{a,"b c",NULL}
113	SKU-113	item 113 with\ttab and \\ backslash and 'quote'	141.25	t	2024-04-23	\N
114	SKU-114	item 114 with\ttab and \\ backslash and 'quote'	142.50	f	2024-04-24	\N
115	SKU-115	item 115 with\ttab and \\ backslash and 'quote'	143.75	t	2024-04-25	\N
116	SKU-116	item 116 with\ttab and \\ backslash and 'quote'	145.00	t	2024-04-26	{a,"b c",NULL}
117	SKU-117	item 117 with\ttab and \\ backslash and 'quote'	146.25	f	2024-04-27	\N
118	SKU-118	item 118 with\ttab and \\ backslash and 'quote'	147.50	t	2024-04-28	\N
119	SKU-119	item 119 with\ttab and \\ backslash and 'quote'	148.75	t	2024-04-29	\N
120	SKU-120	\N	150.00	f	2024-04-30	{a,"b c",NULL}
121	SKU-121	item 121 with\ttab and \\ backslash and 'quote'	151.25	t	2024-05-01	\N
122	SKU-122	item 122 with\ttab and \\ backslash and 'quote'	152.50	t	2024-05-02	\N
123	SKU-123	item 123 with\ttab and \\ backslash and 'quote'	153.75	f	2024-05-03	\N
124	SKU-124	item 124 with\ttab and \\ backslash and 'quote'	155.00	t	2024-05-04	{a,"b c",NULL}
125	SKU-125	item 125 with\ttab and \\ backslash and 'quote'	156.25	t	2024-05-05	\N
126	SKU-126	item 126 with\ttab and \\ backslash and 'quote'	157.50	f	2024-05-06	\N
127	SKU-127	item 127 with\ttab and \\ backslash and 'quote'	158.75	t	2024-05-07	\N
128	SKU-128	item 128 with\ttab and \\ backslash and 'quote'	160.00	t	2024-05-08	{a,"b c",NULL}
129	SKU-129	item 129 with\ttab and \\ backslash and 'quote'	161.25	f	2024-05-09	\N
130	SKU-130	\N	162.50	t	2024-05-10	\N
131	SKU-131	item 131 with\ttab and \\ backslash and 'quote'	163.75	t	2024-05-11	\N
132	SKU-132	item 132 with\ttab and \\ backslash and 'quote'	165.00	f	2024-05-12	{a,"b c",NULL}
133	SKU-133	item 133 with\ttab and \\ backslash and 'quote'	166.25	t	2024-05-13	\N
134	SKU-134	item 134 with\ttab and \\ backslash and 'quote'	167.50	t	2024-05-14	\N
135	SKU-135	item 135 with\ttab and \\ backslash and 'quote'	168.75	f	2024-05-15	\N
136	SKU-136	item 136 with\ttab and \\ backslash and 'quote'	170.00	t	2024-05-16	{a,"b c",NULL}
137	SKU-137	item 137 with\ttab and \\ backslash and 'quote'	171.25	t	2024-05-17	\N
138	SKU-138	item 138 with\ttab and \\ backslash and 'quote'	172.50	f	2024-05-18	\N
139	SKU-139	item 139 with\ttab and \\ backslash and 'quote'	173.75	t	2024-05-19	\N
140	SKU-140	\N	175.00	t	2024-05-20	{a,"b c",NULL}
141	SKU-141	item 141 with\ttab and \\ backslash and 'quote'	176.25	f	2024-05-21	\N
142	SKU-142	item 142 with\ttab and \\ backslash and 'quote'	177.50	t	2024-05-22	\N
143	SKU-143	item 143 with\ttab and \\ backslash and 'quote'	178.75	t	2024-05-23	\N
144	SKU-144	item 144 with\ttab and \\ backslash and 'quote'	180.00	f	2024-05-24	{a,"b c",NULL}
145	SKU-145	item 145 with\ttab and \\ backslash and 'quote'	181.25	t	2024-05-25	\N
146	SKU-146	item 146 with\ttab and \\ backslash and 'quote'	182.50	t	2024-05-26	\N
147	SKU-147	item 147 with\ttab and \\ backslash and 'quote'	183.75	f	2024-05-27	\N
148	SKU-148	item 148 with\ttab and \\ backslash and 'quote'	185.00	t	2024-05-28	{a,"b c",NULL}
149	SKU-149	item 149 with\ttab and \\ backslash and 'quote'	186.25	t	2024-05-29	\N
150	SKU-150	\N	187.50	f	2024-05-30	\N
151	SKU-151	item 151 with\ttab and \\ backslash and 'quote'	188.75	t	2024-05-31	\N
152	SKU-152	item 152 with\ttab and \\ backslash and 'quote'	190.00	t	2024-06-01	{a,"b c",NULL}
153	SKU-153	item 153 with\ttab and \\ backslash and 'quote'	191.25	f	2024-06-02	\N
154	SKU-154	item 154 with\ttab and \\ backslash and 'quote'	192.50	t	2024-06-03	\N
155	SKU-155	item 155 with\ttab and \\ backslash and 'quote'	193.75	t	2024-06-04	\N
156	SKU-156	item 156 with\ttab and \\ backslash and 'quote'	195.00	f	2024-06-05	{a,"b c",NULL}
157	SKU-157	item 157 with\ttab and \\ backslash and 'quote'	196.25	t	2024-06-06	\N
158	SKU-158	item 158 with\ttab and \\ backslash and 'quote'	197.50	t	2024-06-07	\N
159	SKU-159	item 159 with\ttab and \\ backslash and 'quote'	198.75	f	2024-06-08	\N
160	SKU-160	\N	200.00	t	2024-06-09	{a,"b c",NULL}
161	SKU-161	item 161 with\ttab and \\ backslash and 'quote'	201.25	t	2024-06-10	\N
162	SKU-162	item 162 with\ttab and \\ backslash and 'quote'	202.50	f	2024-06-11	\N
163	SKU-163	item 163 with\ttab and \\ backslash and 'quote'	203.75	t	2024-06-12	\N
164	SKU-164	item 164 with\ttab and \\ backslash and 'quote'	205.00	t	2024-06-13	{a,"b c",NULL}
165	SKU-165	item 165 with\ttab and \\ backslash and 'quote'	206.25	f	2024-06-14	\N
166	SKU-166	item 166 with\ttab and \\ backslash and 'quote'	207.50	t	2024-06-15	\N
167	SKU-167	item 167 with\ttab and \\ backslash and 'quote'	208.75	t	2024-06-16	\N
168	SKU-168	item 168 with\ttab and \\ backslash and 'quote'	210.00	f	2024-06-17	{a,"b c",NULL}
169	SKU-169	item 169 with\ttab and \\ backslash and 'quote'	211.25	t	2024-06-18	\N
170	SKU-170	\N	212.50	t	2024-06-19	\N
171	SKU-171	item 171 with\ttab and \\ backslash and 'quote'	213.75	f	2024-06-20	\N
172	SKU-172	item 172 with\ttab and \\ backslash and 'quote'	215.00	t	2024-06-21	{a,"b c",NULL}
173	SKU-173	item 173 with\ttab and \\ backslash and 'quote'	216.25	t	2024-06-22	\N
174	SKU-174	item 174 with\ttab and \\ backslash and 'quote'	217.50	f	2024-06-23	\N
175	SKU-175	item 175 with\ttab and \\ backslash and 'quote'	218.75	t	2024-06-24	\N
176	SKU-176	item 176 with\ttab and \\ backslash and 'quote'	220.00	t	2024-06-25	{a,"b c",NULL}
177	SKU-177	item 177 with\ttab and \\ backslash and 'quote'	221.25	f	2024-06-26	\N
178	SKU-178	item 178 with\ttab and \\ backslash and 'quote'	222.50	t	2024-06-27	\N
179	SKU-179	item 179 with\ttab and \\ backslash and 'quote'	223.75	t	2024-06-28	\N
180	SKU-180	\N	225.00	f	2024-06-29	{a,"b c",NULL}
181	SKU-181	item 181 with\ttab and \\ backslash and 'quote'	226.25	t	2024-06-30	\N
182	SKU-182	item 182 with\ttab and \\ backslash and 'quote'	227.50	t	2024-07-01	\N
183	SKU-183	item 183 with\ttab and \\ backslash and 'quote'	228.75	f	2024-07-02	\N
184	SKU-184	item 184 with\ttab and \\ backslash and 'quote'	230.00	t	2024-07-03	{a,"b c",NULL}
185	SKU-185	item 185 with\ttab and \\ backslash and 'quote'	231.25	t	2024-07-04	\N
186	SKU-186	item 186 with\ttab and \\ backslash and 'quote'	232.50	f	2024-07-05	\N
187	SKU-187	item 187 with\ttab and \\ backslash and 'quote'	233.75	t	2024-07-06	\N
188	SKU-188	item 188 with\ttab and \\ backslash and 'quote'	235.00	t	2024-07-07	{a,"b c",NULL}
189	SKU-189	item 189 with\ttab and \\ backslash and 'quote'	236.25	f	2024-07-08	\N
190	SKU-190	\N	237.50	t	2024-07-09	\N
191	SKU-191	item 191 with\ttab and \\ backslash and 'quote'	238.75	t	2024-07-10	\N
192	SKU-192	item 192 with\ttab and \\ backslash and 'quote'	240.00	f	2024-07-11	{a,"b c",NULL}
193	SKU-193	item 193 with\ttab and \\ backslash and 'quote'	241.25	t	2024-07-12	\N
194	SKU-194	item 194 with\ttab and \\ backslash and 'quote'	242.50	t	2024-07-13	\N
195	SKU-195	item 195 with\ttab and \\ backslash and 'quote'	243.75	f	2024-07-14	\N
196	SKU-196	item 196 with\ttab and \\ backslash and 'quote'	245.00	t	2024-07-15	{a,"b c",NULL}
197	SKU-197	item 197 with\ttab and \\ backslash and 'quote'	246.25	t	2024-07-16	\N
198	SKU-198	item 198 with\ttab and \\ backslash and 'quote'	247.50	f	2024-07-17	\N
199	SKU-199	item 199 with\ttab and \\ backslash and 'quote'	248.75	t	2024-07-18	\N
200	SKU-200	\N	250.00	t	2024-07-19	{a,"b c",NULL}
\.


--
-- Data for Name: dump_notes; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.dump_notes (k, body, raw) FROM stdin;
1	x	\\xc4ca4238a0b923820dcc509a6f75849b
2	xx	\\xc81e728d9d4c2f636f067f89cc14862c
3	xxx	\\xeccbc87e4b5ce2fe28308fd9f2a7baf3
4	xxxx	\\xa87ff679a2f3e71d9181a67b7542122c
5	xxxxx	\\xe4da3b7fbbce2345d7772b0674a318d5
6	xxxxxx	\\x1679091c5a880faf6fb5e6087eb1b2dc
7	xxxxxxx	\\x8f14e45fceea167a5a36dedd4bea2543
8	xxxxxxxx	\\xc9f0f895fb98ab9159f51fd0297e236d
9	xxxxxxxxx	\\x45c48cce2e2d7fbdea1afc51c7c6ad26
10	xxxxxxxxxx	\\xd3d9446802a44259755d38e6d163e820
11	xxxxxxxxxxx	\\x6512bd43d9caa6e02c990b0a82652dca
12	xxxxxxxxxxxx	\\xc20ad4d76fe97759aa27a0c99bff6710
13	xxxxxxxxxxxxx	\\xc51ce410c124a10e0db5e4b97fc2af39
14	xxxxxxxxxxxxxx	\\xaab3238922bcc25a6f606eb525ffdc56
15	xxxxxxxxxxxxxxx	\\x9bf31c7ff062936a96d3c8bd1f8f2ff3
16	xxxxxxxxxxxxxxxx	\\xc74d97b01eae257e44aa9d5bade97baf
17	xxxxxxxxxxxxxxxxx	\\x70efdf2ec9b086079795c442636b55fb
18	xxxxxxxxxxxxxxxxxx	\\x6f4922f45568161a8cdf4ad2299f6d23
19	xxxxxxxxxxxxxxxxxxx	\\x1f0e3dad99908345f7439f8ffabdffc4
20	xxxxxxxxxxxxxxxxxxxx	\\x98f13708210194c475687be6106a3b84
21	xxxxxxxxxxxxxxxxxxxxx	\\x3c59dc048e8850243be8079a5c74d079
22	xxxxxxxxxxxxxxxxxxxxxx	\\xb6d767d2f8ed5d21a44b0e5886680cb9
23	xxxxxxxxxxxxxxxxxxxxxxx	\\x37693cfc748049e45d87b8c7d8b9aacd
24	xxxxxxxxxxxxxxxxxxxxxxxx	\\x1ff1de774005f8da13f42943881c655f
25	xxxxxxxxxxxxxxxxxxxxxxxxx	\\x8e296a067a37563370ded05f5a3bf3ec
26	xxxxxxxxxxxxxxxxxxxxxxxxxx	\\x4e732ced3463d06de0ca9a15b6153677
27	xxxxxxxxxxxxxxxxxxxxxxxxxxx	\\x02e74f10e0327ad868d138f2b4fdd6f0
28	xxxxxxxxxxxxxxxxxxxxxxxxxxxx	\\x33e75ff09dd601bbe69f351039152189
29	xxxxxxxxxxxxxxxxxxxxxxxxxxxxx	\\x6ea9ab1baa0efb9e19094440c317e21b
30	xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx	\\x34173cb38f07f89ddbebc2ac9128303f
\.


--
-- Data for Name: dump_orders; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.dump_orders (id, item_id, qty, placed, note) FROM stdin;
1	2	2	2024-03-01 12:01:00+00	\N
2	3	3	2024-03-01 12:02:00+00	\N
3	4	4	2024-03-01 12:03:00+00	\N
4	5	5	2024-03-01 12:04:00+00	\N
5	6	6	2024-03-01 12:05:00+00	multi\nline
6	7	7	2024-03-01 12:06:00+00	\N
7	8	1	2024-03-01 12:07:00+00	\N
8	9	2	2024-03-01 12:08:00+00	\N
9	10	3	2024-03-01 12:09:00+00	\N
10	11	4	2024-03-01 12:10:00+00	multi\nline
11	12	5	2024-03-01 12:11:00+00	\N
12	13	6	2024-03-01 12:12:00+00	\N
13	14	7	2024-03-01 12:13:00+00	\N
14	15	1	2024-03-01 12:14:00+00	\N
15	16	2	2024-03-01 12:15:00+00	multi\nline
16	17	3	2024-03-01 12:16:00+00	\N
17	18	4	2024-03-01 12:17:00+00	\N
18	19	5	2024-03-01 12:18:00+00	\N
19	20	6	2024-03-01 12:19:00+00	\N
20	21	7	2024-03-01 12:20:00+00	multi\nline
21	22	1	2024-03-01 12:21:00+00	\N
22	23	2	2024-03-01 12:22:00+00	\N
23	24	3	2024-03-01 12:23:00+00	\N
24	25	4	2024-03-01 12:24:00+00	\N
25	26	5	2024-03-01 12:25:00+00	multi\nline
26	27	6	2024-03-01 12:26:00+00	\N
27	28	7	2024-03-01 12:27:00+00	\N
28	29	1	2024-03-01 12:28:00+00	\N
29	30	2	2024-03-01 12:29:00+00	\N
30	31	3	2024-03-01 12:30:00+00	multi\nline
31	32	4	2024-03-01 12:31:00+00	\N
32	33	5	2024-03-01 12:32:00+00	\N
33	34	6	2024-03-01 12:33:00+00	\N
34	35	7	2024-03-01 12:34:00+00	\N
35	36	1	2024-03-01 12:35:00+00	multi\nline
36	37	2	2024-03-01 12:36:00+00	\N
37	38	3	2024-03-01 12:37:00+00	\N
38	39	4	2024-03-01 12:38:00+00	\N
39	40	5	2024-03-01 12:39:00+00	\N
40	41	6	2024-03-01 12:40:00+00	multi\nline
41	42	7	2024-03-01 12:41:00+00	\N
42	43	1	2024-03-01 12:42:00+00	\N
43	44	2	2024-03-01 12:43:00+00	\N
44	45	3	2024-03-01 12:44:00+00	\N
45	46	4	2024-03-01 12:45:00+00	multi\nline
46	47	5	2024-03-01 12:46:00+00	\N
47	48	6	2024-03-01 12:47:00+00	\N
48	49	7	2024-03-01 12:48:00+00	\N
49	50	1	2024-03-01 12:49:00+00	\N
50	51	2	2024-03-01 12:50:00+00	multi\nline
51	52	3	2024-03-01 12:51:00+00	\N
52	53	4	2024-03-01 12:52:00+00	\N
53	54	5	2024-03-01 12:53:00+00	\N
54	55	6	2024-03-01 12:54:00+00	\N
55	56	7	2024-03-01 12:55:00+00	multi\nline
56	57	1	2024-03-01 12:56:00+00	\N
57	58	2	2024-03-01 12:57:00+00	\N
58	59	3	2024-03-01 12:58:00+00	\N
59	60	4	2024-03-01 12:59:00+00	\N
60	61	5	2024-03-01 13:00:00+00	multi\nline
61	62	6	2024-03-01 13:01:00+00	\N
62	63	7	2024-03-01 13:02:00+00	\N
63	64	1	2024-03-01 13:03:00+00	\N
64	65	2	2024-03-01 13:04:00+00	\N
65	66	3	2024-03-01 13:05:00+00	multi\nline
66	67	4	2024-03-01 13:06:00+00	\N
67	68	5	2024-03-01 13:07:00+00	\N
68	69	6	2024-03-01 13:08:00+00	\N
69	70	7	2024-03-01 13:09:00+00	\N
70	71	1	2024-03-01 13:10:00+00	multi\nline
71	72	2	2024-03-01 13:11:00+00	\N
72	73	3	2024-03-01 13:12:00+00	\N
73	74	4	2024-03-01 13:13:00+00	\N
74	75	5	2024-03-01 13:14:00+00	\N
75	76	6	2024-03-01 13:15:00+00	multi\nline
76	77	7	2024-03-01 13:16:00+00	\N
77	78	1	2024-03-01 13:17:00+00	\N
78	79	2	2024-03-01 13:18:00+00	\N
79	80	3	2024-03-01 13:19:00+00	\N
80	81	4	2024-03-01 13:20:00+00	multi\nline
81	82	5	2024-03-01 13:21:00+00	\N
82	83	6	2024-03-01 13:22:00+00	\N
83	84	7	2024-03-01 13:23:00+00	\N
84	85	1	2024-03-01 13:24:00+00	\N
85	86	2	2024-03-01 13:25:00+00	multi\nline
86	87	3	2024-03-01 13:26:00+00	\N
87	88	4	2024-03-01 13:27:00+00	\N
88	89	5	2024-03-01 13:28:00+00	\N
89	90	6	2024-03-01 13:29:00+00	\N
90	91	7	2024-03-01 13:30:00+00	multi\nline
91	92	1	2024-03-01 13:31:00+00	\N
92	93	2	2024-03-01 13:32:00+00	\N
93	94	3	2024-03-01 13:33:00+00	\N
94	95	4	2024-03-01 13:34:00+00	\N
95	96	5	2024-03-01 13:35:00+00	multi\nline
96	97	6	2024-03-01 13:36:00+00	\N
97	98	7	2024-03-01 13:37:00+00	\N
98	99	1	2024-03-01 13:38:00+00	\N
99	100	2	2024-03-01 13:39:00+00	\N
100	101	3	2024-03-01 13:40:00+00	multi\nline
101	102	4	2024-03-01 13:41:00+00	\N
102	103	5	2024-03-01 13:42:00+00	\N
103	104	6	2024-03-01 13:43:00+00	\N
104	105	7	2024-03-01 13:44:00+00	\N
105	106	1	2024-03-01 13:45:00+00	multi\nline
106	107	2	2024-03-01 13:46:00+00	\N
107	108	3	2024-03-01 13:47:00+00	\N
108	109	4	2024-03-01 13:48:00+00	\N
109	110	5	2024-03-01 13:49:00+00	\N
110	111	6	2024-03-01 13:50:00+00	multi\nline
111	112	7	2024-03-01 13:51:00+00	\N
112	113	1	2024-03-01 13:52:00+00	\N
113	114	2	2024-03-01 13:53:00+00	\N
114	115	3	2024-03-01 13:54:00+00	\N
115	116	4	2024-03-01 13:55:00+00	multi\nline
116	117	5	2024-03-01 13:56:00+00	\N
117	118	6	2024-03-01 13:57:00+00	\N
118	119	7	2024-03-01 13:58:00+00	\N
119	120	1	2024-03-01 13:59:00+00	\N
120	121	2	2024-03-01 14:00:00+00	multi\nline
121	122	3	2024-03-01 14:01:00+00	\N
122	123	4	2024-03-01 14:02:00+00	\N
123	124	5	2024-03-01 14:03:00+00	\N
124	125	6	2024-03-01 14:04:00+00	\N
125	126	7	2024-03-01 14:05:00+00	multi\nline
126	127	1	2024-03-01 14:06:00+00	\N
127	128	2	2024-03-01 14:07:00+00	\N
128	129	3	2024-03-01 14:08:00+00	\N
129	130	4	2024-03-01 14:09:00+00	\N
130	131	5	2024-03-01 14:10:00+00	multi\nline
131	132	6	2024-03-01 14:11:00+00	\N
132	133	7	2024-03-01 14:12:00+00	\N
133	134	1	2024-03-01 14:13:00+00	\N
134	135	2	2024-03-01 14:14:00+00	\N
135	136	3	2024-03-01 14:15:00+00	multi\nline
136	137	4	2024-03-01 14:16:00+00	\N
137	138	5	2024-03-01 14:17:00+00	\N
138	139	6	2024-03-01 14:18:00+00	\N
139	140	7	2024-03-01 14:19:00+00	\N
140	141	1	2024-03-01 14:20:00+00	multi\nline
141	142	2	2024-03-01 14:21:00+00	\N
142	143	3	2024-03-01 14:22:00+00	\N
143	144	4	2024-03-01 14:23:00+00	\N
144	145	5	2024-03-01 14:24:00+00	\N
145	146	6	2024-03-01 14:25:00+00	multi\nline
146	147	7	2024-03-01 14:26:00+00	\N
147	148	1	2024-03-01 14:27:00+00	\N
148	149	2	2024-03-01 14:28:00+00	\N
149	150	3	2024-03-01 14:29:00+00	\N
150	151	4	2024-03-01 14:30:00+00	multi\nline
151	152	5	2024-03-01 14:31:00+00	\N
152	153	6	2024-03-01 14:32:00+00	\N
153	154	7	2024-03-01 14:33:00+00	\N
154	155	1	2024-03-01 14:34:00+00	\N
155	156	2	2024-03-01 14:35:00+00	multi\nline
156	157	3	2024-03-01 14:36:00+00	\N
157	158	4	2024-03-01 14:37:00+00	\N
158	159	5	2024-03-01 14:38:00+00	\N
159	160	6	2024-03-01 14:39:00+00	\N
160	161	7	2024-03-01 14:40:00+00	multi\nline
161	162	1	2024-03-01 14:41:00+00	\N
162	163	2	2024-03-01 14:42:00+00	\N
163	164	3	2024-03-01 14:43:00+00	\N
164	165	4	2024-03-01 14:44:00+00	\N
165	166	5	2024-03-01 14:45:00+00	multi\nline
166	167	6	2024-03-01 14:46:00+00	\N
167	168	7	2024-03-01 14:47:00+00	\N
168	169	1	2024-03-01 14:48:00+00	\N
169	170	2	2024-03-01 14:49:00+00	\N
170	171	3	2024-03-01 14:50:00+00	multi\nline
171	172	4	2024-03-01 14:51:00+00	\N
172	173	5	2024-03-01 14:52:00+00	\N
173	174	6	2024-03-01 14:53:00+00	\N
174	175	7	2024-03-01 14:54:00+00	\N
175	176	1	2024-03-01 14:55:00+00	multi\nline
176	177	2	2024-03-01 14:56:00+00	\N
177	178	3	2024-03-01 14:57:00+00	\N
178	179	4	2024-03-01 14:58:00+00	\N
179	180	5	2024-03-01 14:59:00+00	\N
180	181	6	2024-03-01 15:00:00+00	multi\nline
181	182	7	2024-03-01 15:01:00+00	\N
182	183	1	2024-03-01 15:02:00+00	\N
183	184	2	2024-03-01 15:03:00+00	\N
184	185	3	2024-03-01 15:04:00+00	\N
185	186	4	2024-03-01 15:05:00+00	multi\nline
186	187	5	2024-03-01 15:06:00+00	\N
187	188	6	2024-03-01 15:07:00+00	\N
188	189	7	2024-03-01 15:08:00+00	\N
189	190	1	2024-03-01 15:09:00+00	\N
190	191	2	2024-03-01 15:10:00+00	multi\nline
191	192	3	2024-03-01 15:11:00+00	\N
192	193	4	2024-03-01 15:12:00+00	\N
193	194	5	2024-03-01 15:13:00+00	\N
194	195	6	2024-03-01 15:14:00+00	\N
195	196	7	2024-03-01 15:15:00+00	multi\nline
196	197	1	2024-03-01 15:16:00+00	\N
197	198	2	2024-03-01 15:17:00+00	\N
198	199	3	2024-03-01 15:18:00+00	\N
199	200	4	2024-03-01 15:19:00+00	\N
200	1	5	2024-03-01 15:20:00+00	multi\nline
201	2	6	2024-03-01 15:21:00+00	\N
202	3	7	2024-03-01 15:22:00+00	\N
203	4	1	2024-03-01 15:23:00+00	\N
204	5	2	2024-03-01 15:24:00+00	\N
205	6	3	2024-03-01 15:25:00+00	multi\nline
206	7	4	2024-03-01 15:26:00+00	\N
207	8	5	2024-03-01 15:27:00+00	\N
208	9	6	2024-03-01 15:28:00+00	\N
209	10	7	2024-03-01 15:29:00+00	\N
210	11	1	2024-03-01 15:30:00+00	multi\nline
211	12	2	2024-03-01 15:31:00+00	\N
212	13	3	2024-03-01 15:32:00+00	\N
213	14	4	2024-03-01 15:33:00+00	\N
214	15	5	2024-03-01 15:34:00+00	\N
215	16	6	2024-03-01 15:35:00+00	multi\nline
216	17	7	2024-03-01 15:36:00+00	\N
217	18	1	2024-03-01 15:37:00+00	\N
218	19	2	2024-03-01 15:38:00+00	\N
219	20	3	2024-03-01 15:39:00+00	\N
220	21	4	2024-03-01 15:40:00+00	multi\nline
221	22	5	2024-03-01 15:41:00+00	\N
222	23	6	2024-03-01 15:42:00+00	\N
223	24	7	2024-03-01 15:43:00+00	\N
224	25	1	2024-03-01 15:44:00+00	\N
225	26	2	2024-03-01 15:45:00+00	multi\nline
226	27	3	2024-03-01 15:46:00+00	\N
227	28	4	2024-03-01 15:47:00+00	\N
228	29	5	2024-03-01 15:48:00+00	\N
229	30	6	2024-03-01 15:49:00+00	\N
230	31	7	2024-03-01 15:50:00+00	multi\nline
231	32	1	2024-03-01 15:51:00+00	\N
232	33	2	2024-03-01 15:52:00+00	\N
233	34	3	2024-03-01 15:53:00+00	\N
234	35	4	2024-03-01 15:54:00+00	\N
235	36	5	2024-03-01 15:55:00+00	multi\nline
236	37	6	2024-03-01 15:56:00+00	\N
237	38	7	2024-03-01 15:57:00+00	\N
238	39	1	2024-03-01 15:58:00+00	\N
239	40	2	2024-03-01 15:59:00+00	\N
240	41	3	2024-03-01 16:00:00+00	multi\nline
241	42	4	2024-03-01 16:01:00+00	\N
242	43	5	2024-03-01 16:02:00+00	\N
243	44	6	2024-03-01 16:03:00+00	\N
244	45	7	2024-03-01 16:04:00+00	\N
245	46	1	2024-03-01 16:05:00+00	multi\nline
246	47	2	2024-03-01 16:06:00+00	\N
247	48	3	2024-03-01 16:07:00+00	\N
248	49	4	2024-03-01 16:08:00+00	\N
249	50	5	2024-03-01 16:09:00+00	\N
250	51	6	2024-03-01 16:10:00+00	multi\nline
251	52	7	2024-03-01 16:11:00+00	\N
252	53	1	2024-03-01 16:12:00+00	\N
253	54	2	2024-03-01 16:13:00+00	\N
254	55	3	2024-03-01 16:14:00+00	\N
255	56	4	2024-03-01 16:15:00+00	multi\nline
256	57	5	2024-03-01 16:16:00+00	\N
257	58	6	2024-03-01 16:17:00+00	\N
258	59	7	2024-03-01 16:18:00+00	\N
259	60	1	2024-03-01 16:19:00+00	\N
260	61	2	2024-03-01 16:20:00+00	multi\nline
261	62	3	2024-03-01 16:21:00+00	\N
262	63	4	2024-03-01 16:22:00+00	\N
263	64	5	2024-03-01 16:23:00+00	\N
264	65	6	2024-03-01 16:24:00+00	\N
265	66	7	2024-03-01 16:25:00+00	multi\nline
266	67	1	2024-03-01 16:26:00+00	\N
267	68	2	2024-03-01 16:27:00+00	\N
268	69	3	2024-03-01 16:28:00+00	\N
269	70	4	2024-03-01 16:29:00+00	\N
270	71	5	2024-03-01 16:30:00+00	multi\nline
271	72	6	2024-03-01 16:31:00+00	\N
272	73	7	2024-03-01 16:32:00+00	\N
273	74	1	2024-03-01 16:33:00+00	\N
274	75	2	2024-03-01 16:34:00+00	\N
275	76	3	2024-03-01 16:35:00+00	multi\nline
276	77	4	2024-03-01 16:36:00+00	\N
277	78	5	2024-03-01 16:37:00+00	\N
278	79	6	2024-03-01 16:38:00+00	\N
279	80	7	2024-03-01 16:39:00+00	\N
280	81	1	2024-03-01 16:40:00+00	multi\nline
281	82	2	2024-03-01 16:41:00+00	\N
282	83	3	2024-03-01 16:42:00+00	\N
283	84	4	2024-03-01 16:43:00+00	\N
284	85	5	2024-03-01 16:44:00+00	\N
285	86	6	2024-03-01 16:45:00+00	multi\nline
286	87	7	2024-03-01 16:46:00+00	\N
287	88	1	2024-03-01 16:47:00+00	\N
288	89	2	2024-03-01 16:48:00+00	\N
289	90	3	2024-03-01 16:49:00+00	\N
290	91	4	2024-03-01 16:50:00+00	multi\nline
291	92	5	2024-03-01 16:51:00+00	\N
292	93	6	2024-03-01 16:52:00+00	\N
293	94	7	2024-03-01 16:53:00+00	\N
294	95	1	2024-03-01 16:54:00+00	\N
295	96	2	2024-03-01 16:55:00+00	multi\nline
296	97	3	2024-03-01 16:56:00+00	\N
297	98	4	2024-03-01 16:57:00+00	\N
298	99	5	2024-03-01 16:58:00+00	\N
299	100	6	2024-03-01 16:59:00+00	\N
300	101	7	2024-03-01 17:00:00+00	multi\nline
301	102	1	2024-03-01 17:01:00+00	\N
302	103	2	2024-03-01 17:02:00+00	\N
303	104	3	2024-03-01 17:03:00+00	\N
304	105	4	2024-03-01 17:04:00+00	\N
305	106	5	2024-03-01 17:05:00+00	multi\nline
306	107	6	2024-03-01 17:06:00+00	\N
307	108	7	2024-03-01 17:07:00+00	\N
308	109	1	2024-03-01 17:08:00+00	\N
309	110	2	2024-03-01 17:09:00+00	\N
310	111	3	2024-03-01 17:10:00+00	multi\nline
311	112	4	2024-03-01 17:11:00+00	\N
312	113	5	2024-03-01 17:12:00+00	\N
313	114	6	2024-03-01 17:13:00+00	\N
314	115	7	2024-03-01 17:14:00+00	\N
315	116	1	2024-03-01 17:15:00+00	multi\nline
316	117	2	2024-03-01 17:16:00+00	\N
317	118	3	2024-03-01 17:17:00+00	\N
318	119	4	2024-03-01 17:18:00+00	\N
319	120	5	2024-03-01 17:19:00+00	\N
320	121	6	2024-03-01 17:20:00+00	multi\nline
321	122	7	2024-03-01 17:21:00+00	\N
322	123	1	2024-03-01 17:22:00+00	\N
323	124	2	2024-03-01 17:23:00+00	\N
324	125	3	2024-03-01 17:24:00+00	\N
325	126	4	2024-03-01 17:25:00+00	multi\nline
326	127	5	2024-03-01 17:26:00+00	\N
327	128	6	2024-03-01 17:27:00+00	\N
328	129	7	2024-03-01 17:28:00+00	\N
329	130	1	2024-03-01 17:29:00+00	\N
330	131	2	2024-03-01 17:30:00+00	multi\nline
331	132	3	2024-03-01 17:31:00+00	\N
332	133	4	2024-03-01 17:32:00+00	\N
333	134	5	2024-03-01 17:33:00+00	\N
334	135	6	2024-03-01 17:34:00+00	\N
335	136	7	2024-03-01 17:35:00+00	multi\nline
336	137	1	2024-03-01 17:36:00+00	\N
337	138	2	2024-03-01 17:37:00+00	\N
338	139	3	2024-03-01 17:38:00+00	\N
339	140	4	2024-03-01 17:39:00+00	\N
340	141	5	2024-03-01 17:40:00+00	multi\nline
341	142	6	2024-03-01 17:41:00+00	\N
342	143	7	2024-03-01 17:42:00+00	\N
343	144	1	2024-03-01 17:43:00+00	\N
344	145	2	2024-03-01 17:44:00+00	\N
345	146	3	2024-03-01 17:45:00+00	multi\nline
346	147	4	2024-03-01 17:46:00+00	\N
347	148	5	2024-03-01 17:47:00+00	\N
348	149	6	2024-03-01 17:48:00+00	\N
349	150	7	2024-03-01 17:49:00+00	\N
350	151	1	2024-03-01 17:50:00+00	multi\nline
351	152	2	2024-03-01 17:51:00+00	\N
352	153	3	2024-03-01 17:52:00+00	\N
353	154	4	2024-03-01 17:53:00+00	\N
354	155	5	2024-03-01 17:54:00+00	\N
355	156	6	2024-03-01 17:55:00+00	multi\nline
356	157	7	2024-03-01 17:56:00+00	\N
357	158	1	2024-03-01 17:57:00+00	\N
358	159	2	2024-03-01 17:58:00+00	\N
359	160	3	2024-03-01 17:59:00+00	\N
360	161	4	2024-03-01 18:00:00+00	multi\nline
361	162	5	2024-03-01 18:01:00+00	\N
362	163	6	2024-03-01 18:02:00+00	\N
363	164	7	2024-03-01 18:03:00+00	\N
364	165	1	2024-03-01 18:04:00+00	\N
365	166	2	2024-03-01 18:05:00+00	multi\nline
366	167	3	2024-03-01 18:06:00+00	\N
367	168	4	2024-03-01 18:07:00+00	\N
368	169	5	2024-03-01 18:08:00+00	\N
369	170	6	2024-03-01 18:09:00+00	\N
370	171	7	2024-03-01 18:10:00+00	multi\nline
371	172	1	2024-03-01 18:11:00+00	\N
372	173	2	2024-03-01 18:12:00+00	\N
373	174	3	2024-03-01 18:13:00+00	\N
374	175	4	2024-03-01 18:14:00+00	\N
375	176	5	2024-03-01 18:15:00+00	multi\nline
376	177	6	2024-03-01 18:16:00+00	\N
377	178	7	2024-03-01 18:17:00+00	\N
378	179	1	2024-03-01 18:18:00+00	\N
379	180	2	2024-03-01 18:19:00+00	\N
380	181	3	2024-03-01 18:20:00+00	multi\nline
381	182	4	2024-03-01 18:21:00+00	\N
382	183	5	2024-03-01 18:22:00+00	\N
383	184	6	2024-03-01 18:23:00+00	\N
384	185	7	2024-03-01 18:24:00+00	\N
385	186	1	2024-03-01 18:25:00+00	multi\nline
386	187	2	2024-03-01 18:26:00+00	\N
387	188	3	2024-03-01 18:27:00+00	\N
388	189	4	2024-03-01 18:28:00+00	\N
389	190	5	2024-03-01 18:29:00+00	\N
390	191	6	2024-03-01 18:30:00+00	multi\nline
391	192	7	2024-03-01 18:31:00+00	\N
392	193	1	2024-03-01 18:32:00+00	\N
393	194	2	2024-03-01 18:33:00+00	\N
394	195	3	2024-03-01 18:34:00+00	\N
395	196	4	2024-03-01 18:35:00+00	multi\nline
396	197	5	2024-03-01 18:36:00+00	\N
397	198	6	2024-03-01 18:37:00+00	\N
398	199	7	2024-03-01 18:38:00+00	\N
399	200	1	2024-03-01 18:39:00+00	\N
400	1	2	2024-03-01 18:40:00+00	multi\nline
401	2	3	2024-03-01 18:41:00+00	\N
402	3	4	2024-03-01 18:42:00+00	\N
403	4	5	2024-03-01 18:43:00+00	\N
404	5	6	2024-03-01 18:44:00+00	\N
405	6	7	2024-03-01 18:45:00+00	multi\nline
406	7	1	2024-03-01 18:46:00+00	\N
407	8	2	2024-03-01 18:47:00+00	\N
408	9	3	2024-03-01 18:48:00+00	\N
409	10	4	2024-03-01 18:49:00+00	\N
410	11	5	2024-03-01 18:50:00+00	multi\nline
411	12	6	2024-03-01 18:51:00+00	\N
412	13	7	2024-03-01 18:52:00+00	\N
413	14	1	2024-03-01 18:53:00+00	\N
414	15	2	2024-03-01 18:54:00+00	\N
415	16	3	2024-03-01 18:55:00+00	multi\nline
416	17	4	2024-03-01 18:56:00+00	\N
417	18	5	2024-03-01 18:57:00+00	\N
418	19	6	2024-03-01 18:58:00+00	\N
419	20	7	2024-03-01 18:59:00+00	\N
420	21	1	2024-03-01 19:00:00+00	multi\nline
421	22	2	2024-03-01 19:01:00+00	\N
422	23	3	2024-03-01 19:02:00+00	\N
423	24	4	2024-03-01 19:03:00+00	\N
424	25	5	2024-03-01 19:04:00+00	\N
425	26	6	2024-03-01 19:05:00+00	multi\nline
426	27	7	2024-03-01 19:06:00+00	\N
427	28	1	2024-03-01 19:07:00+00	\N
428	29	2	2024-03-01 19:08:00+00	\N
429	30	3	2024-03-01 19:09:00+00	\N
430	31	4	2024-03-01 19:10:00+00	multi\nline
431	32	5	2024-03-01 19:11:00+00	\N
432	33	6	2024-03-01 19:12:00+00	\N
433	34	7	2024-03-01 19:13:00+00	\N
434	35	1	2024-03-01 19:14:00+00	\N
435	36	2	2024-03-01 19:15:00+00	multi\nline
436	37	3	2024-03-01 19:16:00+00	\N
437	38	4	2024-03-01 19:17:00+00	\N
438	39	5	2024-03-01 19:18:00+00	\N
439	40	6	2024-03-01 19:19:00+00	\N
440	41	7	2024-03-01 19:20:00+00	multi\nline
441	42	1	2024-03-01 19:21:00+00	\N
442	43	2	2024-03-01 19:22:00+00	\N
443	44	3	2024-03-01 19:23:00+00	\N
444	45	4	2024-03-01 19:24:00+00	\N
445	46	5	2024-03-01 19:25:00+00	multi\nline
446	47	6	2024-03-01 19:26:00+00	\N
447	48	7	2024-03-01 19:27:00+00	\N
448	49	1	2024-03-01 19:28:00+00	\N
449	50	2	2024-03-01 19:29:00+00	\N
450	51	3	2024-03-01 19:30:00+00	multi\nline
451	52	4	2024-03-01 19:31:00+00	\N
452	53	5	2024-03-01 19:32:00+00	\N
453	54	6	2024-03-01 19:33:00+00	\N
454	55	7	2024-03-01 19:34:00+00	\N
455	56	1	2024-03-01 19:35:00+00	multi\nline
456	57	2	2024-03-01 19:36:00+00	\N
457	58	3	2024-03-01 19:37:00+00	\N
458	59	4	2024-03-01 19:38:00+00	\N
459	60	5	2024-03-01 19:39:00+00	\N
460	61	6	2024-03-01 19:40:00+00	multi\nline
461	62	7	2024-03-01 19:41:00+00	\N
462	63	1	2024-03-01 19:42:00+00	\N
463	64	2	2024-03-01 19:43:00+00	\N
464	65	3	2024-03-01 19:44:00+00	\N
465	66	4	2024-03-01 19:45:00+00	multi\nline
466	67	5	2024-03-01 19:46:00+00	\N
467	68	6	2024-03-01 19:47:00+00	\N
468	69	7	2024-03-01 19:48:00+00	\N
469	70	1	2024-03-01 19:49:00+00	\N
470	71	2	2024-03-01 19:50:00+00	multi\nline
471	72	3	2024-03-01 19:51:00+00	\N
472	73	4	2024-03-01 19:52:00+00	\N
473	74	5	2024-03-01 19:53:00+00	\N
474	75	6	2024-03-01 19:54:00+00	\N
475	76	7	2024-03-01 19:55:00+00	multi\nline
476	77	1	2024-03-01 19:56:00+00	\N
477	78	2	2024-03-01 19:57:00+00	\N
478	79	3	2024-03-01 19:58:00+00	\N
479	80	4	2024-03-01 19:59:00+00	\N
480	81	5	2024-03-01 20:00:00+00	multi\nline
481	82	6	2024-03-01 20:01:00+00	\N
482	83	7	2024-03-01 20:02:00+00	\N
483	84	1	2024-03-01 20:03:00+00	\N
484	85	2	2024-03-01 20:04:00+00	\N
485	86	3	2024-03-01 20:05:00+00	multi\nline
486	87	4	2024-03-01 20:06:00+00	\N
487	88	5	2024-03-01 20:07:00+00	\N
488	89	6	2024-03-01 20:08:00+00	\N
489	90	7	2024-03-01 20:09:00+00	\N
490	91	1	2024-03-01 20:10:00+00	multi\nline
491	92	2	2024-03-01 20:11:00+00	\N
492	93	3	2024-03-01 20:12:00+00	\N
493	94	4	2024-03-01 20:13:00+00	\N
494	95	5	2024-03-01 20:14:00+00	\N
495	96	6	2024-03-01 20:15:00+00	multi\nline
496	97	7	2024-03-01 20:16:00+00	\N
497	98	1	2024-03-01 20:17:00+00	\N
498	99	2	2024-03-01 20:18:00+00	\N
499	100	3	2024-03-01 20:19:00+00	\N
500	101	4	2024-03-01 20:20:00+00	multi\nline
501	102	5	2024-03-01 20:21:00+00	\N
502	103	6	2024-03-01 20:22:00+00	\N
503	104	7	2024-03-01 20:23:00+00	\N
504	105	1	2024-03-01 20:24:00+00	\N
505	106	2	2024-03-01 20:25:00+00	multi\nline
506	107	3	2024-03-01 20:26:00+00	\N
507	108	4	2024-03-01 20:27:00+00	\N
508	109	5	2024-03-01 20:28:00+00	\N
509	110	6	2024-03-01 20:29:00+00	\N
510	111	7	2024-03-01 20:30:00+00	multi\nline
511	112	1	2024-03-01 20:31:00+00	\N
512	113	2	2024-03-01 20:32:00+00	\N
513	114	3	2024-03-01 20:33:00+00	\N
514	115	4	2024-03-01 20:34:00+00	\N
515	116	5	2024-03-01 20:35:00+00	multi\nline
516	117	6	2024-03-01 20:36:00+00	\N
517	118	7	2024-03-01 20:37:00+00	\N
518	119	1	2024-03-01 20:38:00+00	\N
519	120	2	2024-03-01 20:39:00+00	\N
520	121	3	2024-03-01 20:40:00+00	multi\nline
521	122	4	2024-03-01 20:41:00+00	\N
522	123	5	2024-03-01 20:42:00+00	\N
523	124	6	2024-03-01 20:43:00+00	\N
524	125	7	2024-03-01 20:44:00+00	\N
525	126	1	2024-03-01 20:45:00+00	multi\nline
526	127	2	2024-03-01 20:46:00+00	\N
527	128	3	2024-03-01 20:47:00+00	\N
528	129	4	2024-03-01 20:48:00+00	\N
529	130	5	2024-03-01 20:49:00+00	\N
530	131	6	2024-03-01 20:50:00+00	multi\nline
531	132	7	2024-03-01 20:51:00+00	\N
532	133	1	2024-03-01 20:52:00+00	\N
533	134	2	2024-03-01 20:53:00+00	\N
534	135	3	2024-03-01 20:54:00+00	\N
535	136	4	2024-03-01 20:55:00+00	multi\nline
536	137	5	2024-03-01 20:56:00+00	\N
537	138	6	2024-03-01 20:57:00+00	\N
538	139	7	2024-03-01 20:58:00+00	\N
539	140	1	2024-03-01 20:59:00+00	\N
540	141	2	2024-03-01 21:00:00+00	multi\nline
541	142	3	2024-03-01 21:01:00+00	\N
542	143	4	2024-03-01 21:02:00+00	\N
543	144	5	2024-03-01 21:03:00+00	\N
544	145	6	2024-03-01 21:04:00+00	\N
545	146	7	2024-03-01 21:05:00+00	multi\nline
546	147	1	2024-03-01 21:06:00+00	\N
547	148	2	2024-03-01 21:07:00+00	\N
548	149	3	2024-03-01 21:08:00+00	\N
549	150	4	2024-03-01 21:09:00+00	\N
550	151	5	2024-03-01 21:10:00+00	multi\nline
551	152	6	2024-03-01 21:11:00+00	\N
552	153	7	2024-03-01 21:12:00+00	\N
553	154	1	2024-03-01 21:13:00+00	\N
554	155	2	2024-03-01 21:14:00+00	\N
555	156	3	2024-03-01 21:15:00+00	multi\nline
556	157	4	2024-03-01 21:16:00+00	\N
557	158	5	2024-03-01 21:17:00+00	\N
558	159	6	2024-03-01 21:18:00+00	\N
559	160	7	2024-03-01 21:19:00+00	\N
560	161	1	2024-03-01 21:20:00+00	multi\nline
561	162	2	2024-03-01 21:21:00+00	\N
562	163	3	2024-03-01 21:22:00+00	\N
563	164	4	2024-03-01 21:23:00+00	\N
564	165	5	2024-03-01 21:24:00+00	\N
565	166	6	2024-03-01 21:25:00+00	multi\nline
566	167	7	2024-03-01 21:26:00+00	\N
567	168	1	2024-03-01 21:27:00+00	\N
568	169	2	2024-03-01 21:28:00+00	\N
569	170	3	2024-03-01 21:29:00+00	\N
570	171	4	2024-03-01 21:30:00+00	multi\nline
571	172	5	2024-03-01 21:31:00+00	\N
572	173	6	2024-03-01 21:32:00+00	\N
573	174	7	2024-03-01 21:33:00+00	\N
574	175	1	2024-03-01 21:34:00+00	\N
575	176	2	2024-03-01 21:35:00+00	multi\nline
576	177	3	2024-03-01 21:36:00+00	\N
577	178	4	2024-03-01 21:37:00+00	\N
578	179	5	2024-03-01 21:38:00+00	\N
579	180	6	2024-03-01 21:39:00+00	\N
580	181	7	2024-03-01 21:40:00+00	multi\nline
581	182	1	2024-03-01 21:41:00+00	\N
582	183	2	2024-03-01 21:42:00+00	\N
583	184	3	2024-03-01 21:43:00+00	\N
584	185	4	2024-03-01 21:44:00+00	\N
585	186	5	2024-03-01 21:45:00+00	multi\nline
586	187	6	2024-03-01 21:46:00+00	\N
587	188	7	2024-03-01 21:47:00+00	\N
588	189	1	2024-03-01 21:48:00+00	\N
589	190	2	2024-03-01 21:49:00+00	\N
590	191	3	2024-03-01 21:50:00+00	multi\nline
591	192	4	2024-03-01 21:51:00+00	\N
592	193	5	2024-03-01 21:52:00+00	\N
593	194	6	2024-03-01 21:53:00+00	\N
594	195	7	2024-03-01 21:54:00+00	\N
595	196	1	2024-03-01 21:55:00+00	multi\nline
596	197	2	2024-03-01 21:56:00+00	\N
597	198	3	2024-03-01 21:57:00+00	\N
598	199	4	2024-03-01 21:58:00+00	\N
599	200	5	2024-03-01 21:59:00+00	\N
600	1	6	2024-03-01 22:00:00+00	multi\nline
601	2	7	2024-03-01 22:01:00+00	\N
602	3	1	2024-03-01 22:02:00+00	\N
603	4	2	2024-03-01 22:03:00+00	\N
604	5	3	2024-03-01 22:04:00+00	\N
605	6	4	2024-03-01 22:05:00+00	multi\nline
606	7	5	2024-03-01 22:06:00+00	\N
607	8	6	2024-03-01 22:07:00+00	\N
608	9	7	2024-03-01 22:08:00+00	\N
609	10	1	2024-03-01 22:09:00+00	\N
610	11	2	2024-03-01 22:10:00+00	multi\nline
611	12	3	2024-03-01 22:11:00+00	\N
612	13	4	2024-03-01 22:12:00+00	\N
613	14	5	2024-03-01 22:13:00+00	\N
614	15	6	2024-03-01 22:14:00+00	\N
615	16	7	2024-03-01 22:15:00+00	multi\nline
616	17	1	2024-03-01 22:16:00+00	\N
617	18	2	2024-03-01 22:17:00+00	\N
618	19	3	2024-03-01 22:18:00+00	\N
619	20	4	2024-03-01 22:19:00+00	\N
620	21	5	2024-03-01 22:20:00+00	multi\nline
621	22	6	2024-03-01 22:21:00+00	\N
622	23	7	2024-03-01 22:22:00+00	\N
623	24	1	2024-03-01 22:23:00+00	\N
624	25	2	2024-03-01 22:24:00+00	\N
625	26	3	2024-03-01 22:25:00+00	multi\nline
626	27	4	2024-03-01 22:26:00+00	\N
627	28	5	2024-03-01 22:27:00+00	\N
628	29	6	2024-03-01 22:28:00+00	\N
629	30	7	2024-03-01 22:29:00+00	\N
630	31	1	2024-03-01 22:30:00+00	multi\nline
631	32	2	2024-03-01 22:31:00+00	\N
632	33	3	2024-03-01 22:32:00+00	\N
633	34	4	2024-03-01 22:33:00+00	\N
634	35	5	2024-03-01 22:34:00+00	\N
635	36	6	2024-03-01 22:35:00+00	multi\nline
636	37	7	2024-03-01 22:36:00+00	\N
637	38	1	2024-03-01 22:37:00+00	\N
638	39	2	2024-03-01 22:38:00+00	\N
639	40	3	2024-03-01 22:39:00+00	\N
640	41	4	2024-03-01 22:40:00+00	multi\nline
641	42	5	2024-03-01 22:41:00+00	\N
642	43	6	2024-03-01 22:42:00+00	\N
643	44	7	2024-03-01 22:43:00+00	\N
644	45	1	2024-03-01 22:44:00+00	\N
645	46	2	2024-03-01 22:45:00+00	multi\nline
646	47	3	2024-03-01 22:46:00+00	\N
647	48	4	2024-03-01 22:47:00+00	\N
648	49	5	2024-03-01 22:48:00+00	\N
649	50	6	2024-03-01 22:49:00+00	\N
650	51	7	2024-03-01 22:50:00+00	multi\nline
651	52	1	2024-03-01 22:51:00+00	\N
652	53	2	2024-03-01 22:52:00+00	\N
653	54	3	2024-03-01 22:53:00+00	\N
654	55	4	2024-03-01 22:54:00+00	\N
655	56	5	2024-03-01 22:55:00+00	multi\nline
656	57	6	2024-03-01 22:56:00+00	\N
657	58	7	2024-03-01 22:57:00+00	\N
658	59	1	2024-03-01 22:58:00+00	\N
659	60	2	2024-03-01 22:59:00+00	\N
660	61	3	2024-03-01 23:00:00+00	multi\nline
661	62	4	2024-03-01 23:01:00+00	\N
662	63	5	2024-03-01 23:02:00+00	\N
663	64	6	2024-03-01 23:03:00+00	\N
664	65	7	2024-03-01 23:04:00+00	\N
665	66	1	2024-03-01 23:05:00+00	multi\nline
666	67	2	2024-03-01 23:06:00+00	\N
667	68	3	2024-03-01 23:07:00+00	\N
668	69	4	2024-03-01 23:08:00+00	\N
669	70	5	2024-03-01 23:09:00+00	\N
670	71	6	2024-03-01 23:10:00+00	multi\nline
671	72	7	2024-03-01 23:11:00+00	\N
672	73	1	2024-03-01 23:12:00+00	\N
673	74	2	2024-03-01 23:13:00+00	\N
674	75	3	2024-03-01 23:14:00+00	\N
675	76	4	2024-03-01 23:15:00+00	multi\nline
676	77	5	2024-03-01 23:16:00+00	\N
677	78	6	2024-03-01 23:17:00+00	\N
678	79	7	2024-03-01 23:18:00+00	\N
679	80	1	2024-03-01 23:19:00+00	\N
680	81	2	2024-03-01 23:20:00+00	multi\nline
681	82	3	2024-03-01 23:21:00+00	\N
682	83	4	2024-03-01 23:22:00+00	\N
683	84	5	2024-03-01 23:23:00+00	\N
684	85	6	2024-03-01 23:24:00+00	\N
685	86	7	2024-03-01 23:25:00+00	multi\nline
686	87	1	2024-03-01 23:26:00+00	\N
687	88	2	2024-03-01 23:27:00+00	\N
688	89	3	2024-03-01 23:28:00+00	\N
689	90	4	2024-03-01 23:29:00+00	\N
690	91	5	2024-03-01 23:30:00+00	multi\nline
691	92	6	2024-03-01 23:31:00+00	\N
692	93	7	2024-03-01 23:32:00+00	\N
693	94	1	2024-03-01 23:33:00+00	\N
694	95	2	2024-03-01 23:34:00+00	\N
695	96	3	2024-03-01 23:35:00+00	multi\nline
696	97	4	2024-03-01 23:36:00+00	\N
697	98	5	2024-03-01 23:37:00+00	\N
698	99	6	2024-03-01 23:38:00+00	\N
699	100	7	2024-03-01 23:39:00+00	\N
700	101	1	2024-03-01 23:40:00+00	multi\nline
701	102	2	2024-03-01 23:41:00+00	\N
702	103	3	2024-03-01 23:42:00+00	\N
703	104	4	2024-03-01 23:43:00+00	\N
704	105	5	2024-03-01 23:44:00+00	\N
705	106	6	2024-03-01 23:45:00+00	multi\nline
706	107	7	2024-03-01 23:46:00+00	\N
707	108	1	2024-03-01 23:47:00+00	\N
708	109	2	2024-03-01 23:48:00+00	\N
709	110	3	2024-03-01 23:49:00+00	\N
710	111	4	2024-03-01 23:50:00+00	multi\nline
711	112	5	2024-03-01 23:51:00+00	\N
712	113	6	2024-03-01 23:52:00+00	\N
713	114	7	2024-03-01 23:53:00+00	\N
714	115	1	2024-03-01 23:54:00+00	\N
715	116	2	2024-03-01 23:55:00+00	multi\nline
716	117	3	2024-03-01 23:56:00+00	\N
717	118	4	2024-03-01 23:57:00+00	\N
718	119	5	2024-03-01 23:58:00+00	\N
719	120	6	2024-03-01 23:59:00+00	\N
720	121	7	2024-03-02 00:00:00+00	multi\nline
721	122	1	2024-03-02 00:01:00+00	\N
722	123	2	2024-03-02 00:02:00+00	\N
723	124	3	2024-03-02 00:03:00+00	\N
724	125	4	2024-03-02 00:04:00+00	\N
725	126	5	2024-03-02 00:05:00+00	multi\nline
726	127	6	2024-03-02 00:06:00+00	\N
727	128	7	2024-03-02 00:07:00+00	\N
728	129	1	2024-03-02 00:08:00+00	\N
729	130	2	2024-03-02 00:09:00+00	\N
730	131	3	2024-03-02 00:10:00+00	multi\nline
731	132	4	2024-03-02 00:11:00+00	\N
732	133	5	2024-03-02 00:12:00+00	\N
733	134	6	2024-03-02 00:13:00+00	\N
734	135	7	2024-03-02 00:14:00+00	\N
735	136	1	2024-03-02 00:15:00+00	multi\nline
736	137	2	2024-03-02 00:16:00+00	\N
737	138	3	2024-03-02 00:17:00+00	\N
738	139	4	2024-03-02 00:18:00+00	\N
739	140	5	2024-03-02 00:19:00+00	\N
740	141	6	2024-03-02 00:20:00+00	multi\nline
741	142	7	2024-03-02 00:21:00+00	\N
742	143	1	2024-03-02 00:22:00+00	\N
743	144	2	2024-03-02 00:23:00+00	\N
744	145	3	2024-03-02 00:24:00+00	\N
745	146	4	2024-03-02 00:25:00+00	multi\nline
746	147	5	2024-03-02 00:26:00+00	\N
747	148	6	2024-03-02 00:27:00+00	\N
748	149	7	2024-03-02 00:28:00+00	\N
749	150	1	2024-03-02 00:29:00+00	\N
750	151	2	2024-03-02 00:30:00+00	multi\nline
751	152	3	2024-03-02 00:31:00+00	\N
752	153	4	2024-03-02 00:32:00+00	\N
753	154	5	2024-03-02 00:33:00+00	\N
754	155	6	2024-03-02 00:34:00+00	\N
755	156	7	2024-03-02 00:35:00+00	multi\nline
756	157	1	2024-03-02 00:36:00+00	\N
757	158	2	2024-03-02 00:37:00+00	\N
758	159	3	2024-03-02 00:38:00+00	\N
759	160	4	2024-03-02 00:39:00+00	\N
760	161	5	2024-03-02 00:40:00+00	multi\nline
761	162	6	2024-03-02 00:41:00+00	\N
762	163	7	2024-03-02 00:42:00+00	\N
763	164	1	2024-03-02 00:43:00+00	\N
764	165	2	2024-03-02 00:44:00+00	\N
765	166	3	2024-03-02 00:45:00+00	multi\nline
766	167	4	2024-03-02 00:46:00+00	\N
767	168	5	2024-03-02 00:47:00+00	\N
768	169	6	2024-03-02 00:48:00+00	\N
769	170	7	2024-03-02 00:49:00+00	\N
770	171	1	2024-03-02 00:50:00+00	multi\nline
771	172	2	2024-03-02 00:51:00+00	\N
772	173	3	2024-03-02 00:52:00+00	\N
773	174	4	2024-03-02 00:53:00+00	\N
774	175	5	2024-03-02 00:54:00+00	\N
775	176	6	2024-03-02 00:55:00+00	multi\nline
776	177	7	2024-03-02 00:56:00+00	\N
777	178	1	2024-03-02 00:57:00+00	\N
778	179	2	2024-03-02 00:58:00+00	\N
779	180	3	2024-03-02 00:59:00+00	\N
780	181	4	2024-03-02 01:00:00+00	multi\nline
781	182	5	2024-03-02 01:01:00+00	\N
782	183	6	2024-03-02 01:02:00+00	\N
783	184	7	2024-03-02 01:03:00+00	\N
784	185	1	2024-03-02 01:04:00+00	\N
785	186	2	2024-03-02 01:05:00+00	multi\nline
786	187	3	2024-03-02 01:06:00+00	\N
787	188	4	2024-03-02 01:07:00+00	\N
788	189	5	2024-03-02 01:08:00+00	\N
789	190	6	2024-03-02 01:09:00+00	\N
790	191	7	2024-03-02 01:10:00+00	multi\nline
791	192	1	2024-03-02 01:11:00+00	\N
792	193	2	2024-03-02 01:12:00+00	\N
793	194	3	2024-03-02 01:13:00+00	\N
794	195	4	2024-03-02 01:14:00+00	\N
795	196	5	2024-03-02 01:15:00+00	multi\nline
796	197	6	2024-03-02 01:16:00+00	\N
797	198	7	2024-03-02 01:17:00+00	\N
798	199	1	2024-03-02 01:18:00+00	\N
799	200	2	2024-03-02 01:19:00+00	\N
800	1	3	2024-03-02 01:20:00+00	multi\nline
\.


--
-- Name: dump_items_id_seq; Type: SEQUENCE SET; Schema: public; Owner: postgres
--

SELECT pg_catalog.setval('public.dump_items_id_seq', 250, true);


--
-- Name: dump_orders_id_seq; Type: SEQUENCE SET; Schema: public; Owner: postgres
--

SELECT pg_catalog.setval('public.dump_orders_id_seq', 800, true);


--
-- Name: dump_items dump_items_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_items
    ADD CONSTRAINT dump_items_pkey PRIMARY KEY (id);


--
-- Name: dump_items dump_items_sku_key; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_items
    ADD CONSTRAINT dump_items_sku_key UNIQUE (sku);


--
-- Name: dump_orders dump_orders_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_orders
    ADD CONSTRAINT dump_orders_pkey PRIMARY KEY (id);


--
-- Name: dump_orders_item; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX dump_orders_item ON public.dump_orders USING btree (item_id);


--
-- Name: dump_orders_item_placed; Type: INDEX; Schema: public; Owner: postgres
--

CREATE UNIQUE INDEX dump_orders_item_placed ON public.dump_orders USING btree (item_id, placed);


--
-- Name: dump_orders dump_orders_item_fk; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.dump_orders
    ADD CONSTRAINT dump_orders_item_fk FOREIGN KEY (item_id) REFERENCES public.dump_items(id) ON DELETE RESTRICT;


--
-- PostgreSQL database dump complete
--


