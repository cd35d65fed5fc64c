-- SNAPPER reads its command before it takes any snapshot: what is wrong is named.
SNAPPER stats 1;
SNAPPER cpu 1 1 all;
SNAPPER stats 0 1 all;
SNAPPER stats 1 0 all;
SNAPPER stats 1 1 nobody;
SNAPPER ash=sample_time 1 1 all;
SNAPPER stats 1 1 all sinclude='%logical%;
SNAPPER stats 1 1 all whatever=1;
-- A session that is not there (its first reading finds none).
SNAPPER stats 0.01 1 99999;
SNAPPER ash 0.01 1 program=NOSUCH%;
