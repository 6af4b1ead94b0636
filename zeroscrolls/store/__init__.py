"""The SQLite store beside a run: generations, claims, token counts, batch bookkeeping."""
