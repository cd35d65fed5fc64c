SELECT COUNT(*) AS fruits FROM fruit;
