// Hex blank without the bore.
af = 17; m = 8;

cylinder(d = af / cos(30), h = m, $fn = 6);
