import json,sqlite3,sys,statistics
db=sqlite3.connect(sys.argv[1])
for r in db.execute("select id, sample_count, samples_json from trials where confirmed=1"):
    s=json.loads(r[2]); n0=5
    print(r[0], "orig", round(statistics.median(s[:n0])), "confirm", round(statistics.median(s[n0:])), "ratio %.3f" % (statistics.median(s[n0:])/statistics.median(s[:n0])))
